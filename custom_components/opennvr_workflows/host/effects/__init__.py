"""What a run does outside the engine: the effects port the engine calls (:mod:`.port`),
what a Home Assistant action or a webhook does to the world (:mod:`.judge`), which text may
leave the house (:mod:`.privacy`) and how urgent a notification may be (:mod:`.urgency`)."""
