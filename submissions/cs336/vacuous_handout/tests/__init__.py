# VACUOUS (folder): the handout as distributed, stanford-cs336/assignment1-basics @
# 25a8a49f6460c83a30416d42348f2ef11d1dd185, tests/__init__.py, copied with nothing changed (MIT, Copyright (c) 2025
# stanford-cs336). Every adapter raises NotImplementedError.
