"""Stage 5, reports: what a grade looks like to people and tools (terminal table, Gradescope results.json, JUnit,
gradebook CSV, Markdown/HTML feedback with a heatmap, the class summary). They word; they never decide."""
