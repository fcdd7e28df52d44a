"""A workflow's questions to people: who is asked on which phones (:mod:`.people`), the
cards (:mod:`.messages`, :mod:`.plans`), the one-time answer tokens (:mod:`.tickets`), the
signed links and the pages behind them (:mod:`.links`, :mod:`.views`), the desk that asks
and takes answers for one entry (:mod:`.desk`), and answering from Home Assistant itself
(:mod:`.api`)."""
