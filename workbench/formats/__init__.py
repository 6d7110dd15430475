"""Parsing shared by the importers.

``json_object.py`` reads one JSON object member by member, its big array cut into runs of whole
items for msgspec; ``timestamps.py``; ``prom_text.py`` Prometheus text; ``safe_yaml.py`` bounded
YAML; ``deployments.py``, ``engine_flags.py`` and ``engine_config.py`` what a deployment file
runs; ``load_sweep.py`` a load sweep's levels; ``arm_values.py`` ``wb stats --csv``'s values;
``record_map.py`` ``wb import --map``'s declarative map; ``fixed_width.py`` sacct without ``-P``.
"""
