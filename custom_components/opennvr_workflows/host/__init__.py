"""The Home Assistant side of workflows: how a run touches Home Assistant, in one place.

The pure packages decide (``workflow`` validates, ``engine`` runs, ``ai`` looks and
investigates); this package hosts them in a config entry: the workflow folder and its
repairs (:mod:`.folder.files`), the engine's Effects port (:mod:`.effects.port`), its AI port
(:mod:`.model.port`), the entry's settings as the engine reads them (:mod:`.settings`), the
object that ties them together for one entry (:mod:`.workflows`), and the actions a person
or an automation calls (:mod:`.services`).
"""
