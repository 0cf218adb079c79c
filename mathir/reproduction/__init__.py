"""One command per headline: the models a published figure rests on, trained with fixed
seeds, evaluated and tabulated (``mathir reproduce TARGET``); one module per task family,
as in :mod:`mathir.tasks` (:mod:`mathir.reproduction.worldtree_headline`, its parts in the modules
beside it)."""
