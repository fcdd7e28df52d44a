"""The home's own cases and the model's measurements: runs marked right or wrong kept as
cases (:mod:`.marks`, :mod:`.store`, :mod:`.pictures`), the measurements per model
(:mod:`.measurements`), the entry's evaluation holding both (:mod:`.evaluation`), and their
actions (:mod:`.actions`)."""
