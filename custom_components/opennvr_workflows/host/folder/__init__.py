"""The workflow folder: reading and writing its files (:mod:`.files`), what importing one
would do (:mod:`.preview`), the file actions (:mod:`.actions`) and Describe it
(:mod:`.describe`)."""
