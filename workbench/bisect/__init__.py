"""``wb bisect``: find the first bad change with controlled, sequentially stopped reruns.

- ``candidates``: the ordered versions between good and bad (git history or a list),
  each prepared in a clean workspace (a git worktree, or a directory per version) and built;
- ``classify``: what one step's comparison says of its candidate (like good, like bad,
  in between, undecided), a pure function;
- ``bisection``: the search itself, stored after every step so it can be resumed, and
  its result as an observation with evidence.

Doors: ``workflow.py`` the list and the store's refusals for the faces; ``records.py`` what a
bisection keeps (``StoreRecords``, through ``store.bisect``'s functions).
"""
