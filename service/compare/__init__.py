"""The cross-device view: every kernel's percent of roof, time and binding on every card.

``build.compare_history`` reads it from the history store (``roofguard compare --repo``, the
dashboard's ``/compare`` page); ``forecasts`` adds a card a kernel never ran on; ``render``
writes it as text, markdown or JSON and draws one roofline per card.
"""
