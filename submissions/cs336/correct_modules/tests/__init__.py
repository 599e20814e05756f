# (empty in the handout; makes tests/ a package so that tests.adapters imports)
