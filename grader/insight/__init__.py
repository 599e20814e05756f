"""Insight (after grading, before the reports): what a class shares. Near-duplicate code (winnowed fingerprints of
normalized tokens), code traced to public implementations or to folders the teacher adds, and behaviour twins (the
same wrong answers on the diagnosis probes). It reads the submissions' text and their stored grades; it decides no
score and accuses no one: the reports word its findings as "similar: review"."""
