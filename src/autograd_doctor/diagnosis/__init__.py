"""What a diagnosis is, before any analysis finds one or any renderer prints it.

- `model`: Diagnosis, Location, Suggestion, TensorInfo, Report (the one report model);
- `source`: reading the user's source (lines, statements) into Locations;
- `codes`: the registry of diagnosis codes, with their titles and explanations.

It imports only `recording.frames` (which files are the user's) below it.
"""
