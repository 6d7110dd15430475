"""Where a deployment file puts a serving engine's container: the shapes ``wb`` reads.

- Kubernetes workloads (``Deployment``, ``StatefulSet``, ``DaemonSet``, ``ReplicaSet``,
  ``Job``, ``CronJob``, ``Pod``, and ``List`` of them): ``containers[*]``;
- ``LeaderWorkerSet``: the leader template's containers, then the workers';
- KServe ``InferenceService`` (``spec.predictor.model`` or ``spec.predictor.containers``)
  and ``ServingRuntime`` / ``ClusterServingRuntime`` (``spec.containers``);
- Helm values of the vLLM production stack: ``servingEngineSpec.modelSpec[*]``
  (``vllmConfig`` settings, ``extraArgs``, ``env``, ``repository:tag``, ``modelURL``);
- docker compose: ``services.*`` (``entrypoint`` + ``command`` as a list or a string,
  ``environment`` as a list or a mapping, GPU ``deploy.resources`` reservations).

Each site keeps the path inside its document where every part was found, so the engine
configuration can say where it came from. Reading the flags is engine_flags' job. The
documents are untrusted parsed YAML (``Mapping[str, object]``, ``object``): every value is
checked for its shape before it is read.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "Pod", "CronJob"}


@dataclass
class Site:
    """One container (or Helm model, or compose service) that may run an engine."""

    shape: str
    where: str  # path of the container inside the file ("doc 1: spec.template.spec.containers[0]")
    image: str = ""
    argv: list[str] = field(default_factory=list)
    argv_where: str = ""
    env: dict[str, str] = field(default_factory=dict)
    env_where: str = ""
    env_unread: list[str] = field(default_factory=list)  # names whose value the file does not hold
    mapping: Mapping[str, object] | None = None  # settings written as a mapping (Helm vllmConfig)
    mapping_where: str = ""
    model: str | None = None
    gpus: int | None = None
    accelerator: str | None = None
    engine_hint: str | None = None


def _map(value: object) -> Mapping[str, object]:
    """A mapping where the file has one; anything else reads as empty (files are untrusted)."""
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _text(value: object) -> str:
    """A scalar as the text a process would see (YAML ``true`` -> ``true``, ``1`` -> ``1``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _argv(value: object, *, split: bool = False) -> list[str]:
    """A command as a list; a string one split as compose splits it (``split``), else
    kept whole, to be read as a shell line."""
    if value is None:
        return []
    if isinstance(value, list):
        return [_text(v) for v in value]
    if split:
        try:
            return shlex.split(_text(value))
        except ValueError:
            pass  # an unbalanced quote: kept whole, and reported as not read
    return [_text(value)]


def _gpus(resources: object) -> int | None:
    if not isinstance(resources, dict):
        return None
    limits = _map(resources.get("limits")) or _map(resources.get("requests"))
    for key in ("nvidia.com/gpu", "amd.com/gpu"):
        if key in limits:
            try:
                return int(limits[key])
            except (TypeError, ValueError):
                return None
    return None


def _k8s_env(
    container: Mapping[str, object], where: str, configmaps: dict[str, Mapping[str, object]], site: Site
) -> None:
    for ref in _list(container.get("envFrom")):
        if not isinstance(ref, dict):
            continue
        cm = _map(ref.get("configMapRef"))
        if cm:
            data = configmaps.get(str(cm.get("name")))
            if data is None:
                site.env_unread.append(f"envFrom configMapRef {cm.get('name')} (not in the file)")
            else:
                site.env.update({str(k): _text(v) for k, v in _map(data).items()})
    for e in _list(container.get("env")):
        if isinstance(e, dict) and e.get("name"):
            if "value" in e:
                site.env[str(e["name"])] = _text(e["value"])
            else:
                site.env_unread.append(str(e["name"]))
    site.env_where = f"{where}.env"


def _container_sites(shape: str, pod: object, where: str, configmaps: dict[str, Mapping[str, object]]) -> list[Site]:
    if not isinstance(pod, dict):
        return []
    accelerator = None
    for key, value in _map(pod.get("nodeSelector")).items():
        if "accelerator" in str(key) or "gpu" in str(key).lower():
            accelerator = _text(value)
    sites = []
    for i, container in enumerate(_list(pod.get("containers"))):
        if not isinstance(container, dict):
            continue
        cwhere = f"{where}.containers[{i}]"
        site = Site(
            shape,
            cwhere,
            image=_text(container.get("image")),
            accelerator=accelerator,
            gpus=_gpus(container.get("resources")),
        )
        site.argv = _argv(container.get("command")) + _argv(container.get("args"))
        parts = [p for p in ("command", "args") if container.get(p) is not None]
        site.argv_where = f"{cwhere}.{' + '.join(parts)}" if parts else ""
        _k8s_env(container, cwhere, configmaps, site)
        sites.append(site)
    return sites


def _kserve(doc: Mapping[str, object], where: str, configmaps: dict[str, Mapping[str, object]]) -> list[Site]:
    spec = _map(doc.get("spec"))
    if doc.get("kind") in ("ServingRuntime", "ClusterServingRuntime"):
        return _container_sites(doc["kind"], spec, f"{where}spec", configmaps)
    predictor = _map(spec.get("predictor"))
    sites = _container_sites("InferenceService", predictor, f"{where}spec.predictor", configmaps)
    model = predictor.get("model")
    if isinstance(model, dict):
        mwhere = f"{where}spec.predictor.model"
        fmt = _map(model.get("modelFormat")).get("name")
        site = Site(
            "InferenceService",
            mwhere,
            image=_text(model.get("image")),
            gpus=_gpus(model.get("resources")),
            engine_hint="kserve-huggingface" if str(fmt).lower() == "huggingface" else None,
        )
        site.argv = _argv(model.get("command")) + _argv(model.get("args"))
        parts = [p for p in ("command", "args") if model.get(p) is not None]
        site.argv_where = f"{mwhere}.{' + '.join(parts)}" if parts else ""
        if model.get("storageUri"):
            site.model = _text(model["storageUri"])
        _k8s_env(model, mwhere, configmaps, site)
        sites.insert(0, site)
    return sites


def _helm(values: Mapping[str, object], where: str) -> list[Site]:
    sites = []
    for i, spec in enumerate(_list(_map(values.get("servingEngineSpec")).get("modelSpec"))):
        if not isinstance(spec, dict):
            continue
        swhere = f"{where}servingEngineSpec.modelSpec[{i}]"
        image = _text(spec.get("repository"))
        if image and spec.get("tag") is not None:
            image += f":{_text(spec['tag'])}"
        site = Site(
            "Helm values (vLLM production stack)",
            swhere,
            image=image,
            engine_hint="vllm",
            model=_text(spec.get("modelURL")) or None,
        )
        try:
            site.gpus = int(spec["requestGPU"]) if spec.get("requestGPU") is not None else None
        except (TypeError, ValueError):
            pass
        config = spec.get("vllmConfig")
        if isinstance(config, dict):
            site.mapping = {k: v for k, v in config.items() if k != "extraArgs"}
            site.mapping_where = f"{swhere}.vllmConfig"
            if config.get("extraArgs") is not None:
                site.argv = _argv(config["extraArgs"])
                site.argv_where = f"{swhere}.vllmConfig.extraArgs"
        for e in _list(spec.get("env")):
            if isinstance(e, dict) and e.get("name"):
                if "value" in e:
                    site.env[str(e["name"])] = _text(e["value"])
                else:
                    site.env_unread.append(str(e["name"]))
        site.env_where = f"{swhere}.env"
        selector = spec.get("nodeSelectorTerms") or spec.get("nodeSelector")
        if isinstance(selector, dict):
            for key, value in selector.items():
                if "accelerator" in str(key) or "gpu" in str(key).lower():
                    site.accelerator = _text(value)
        sites.append(site)
    return sites


def _compose(doc: Mapping[str, object], where: str) -> list[Site]:
    sites = []
    for name, service in _map(doc.get("services")).items():
        if not isinstance(service, dict):
            continue
        swhere = f"{where}services.{name}"
        site = Site("docker compose", swhere, image=_text(service.get("image")))
        site.argv = _argv(service.get("entrypoint"), split=True) + _argv(service.get("command"), split=True)
        parts = [p for p in ("entrypoint", "command") if service.get(p) is not None]
        site.argv_where = f"{swhere}.{' + '.join(parts)}" if parts else ""
        env = service.get("environment")
        if isinstance(env, dict):
            for k, v in env.items():
                if v is None:
                    site.env_unread.append(str(k))  # taken from the host's environment
                else:
                    site.env[str(k)] = _text(v)
        elif isinstance(env, list):
            for item in env:
                k, eq, v = _text(item).partition("=")
                if eq:
                    site.env[k] = v
                else:
                    site.env_unread.append(k)
        site.env_where = f"{swhere}.environment"
        devices = _map(_map(_map(service.get("deploy")).get("resources")).get("reservations")).get("devices")
        for device in _list(devices):
            if isinstance(device, dict) and isinstance(device.get("count"), int):
                site.gpus = device["count"]
        sites.append(site)
    return sites


def sites(docs: list[object]) -> list[Site]:
    """Every container-like place in the documents, in file order."""
    configmaps = {
        str(_map(d.get("metadata")).get("name")): _map(d.get("data"))
        for d in docs
        if isinstance(d, dict) and d.get("kind") == "ConfigMap"
    }
    out: list[Site] = []
    for n, doc in enumerate(docs, 1):
        where = f"doc {n}: " if len(docs) > 1 else ""
        out += _doc_sites(doc, where, configmaps)
    return out


def _doc_sites(doc: object, where: str, configmaps: dict[str, Mapping[str, object]]) -> list[Site]:
    if not isinstance(doc, dict):
        return []
    kind = doc.get("kind") if isinstance(doc.get("kind"), str) else None
    spec = _map(doc.get("spec"))
    if kind == "List":
        return [
            s
            for i, item in enumerate(_list(doc.get("items")))
            for s in _doc_sites(item, f"{where}items[{i}].", configmaps)
        ]
    if kind in WORKLOADS:
        if kind == "Pod":
            return _container_sites(kind, spec, f"{where}spec", configmaps)
        if kind == "CronJob":
            return _container_sites(
                kind,
                _map(_map(_map(spec.get("jobTemplate")).get("spec")).get("template")).get("spec"),
                f"{where}spec.jobTemplate.spec.template.spec",
                configmaps,
            )
        return _container_sites(kind, _map(spec.get("template")).get("spec"), f"{where}spec.template.spec", configmaps)
    if kind == "LeaderWorkerSet":
        lws = _map(spec.get("leaderWorkerTemplate"))
        found = []
        for part in ("leaderTemplate", "workerTemplate"):
            found += _container_sites(
                f"LeaderWorkerSet ({part[:-8]})",
                _map(lws.get(part)).get("spec"),
                f"{where}spec.leaderWorkerTemplate.{part}.spec",
                configmaps,
            )
        return found
    if kind in ("InferenceService", "ServingRuntime", "ClusterServingRuntime"):
        return _kserve(doc, where, configmaps)
    if isinstance(doc.get("servingEngineSpec"), dict):
        return _helm(doc, where)
    if isinstance(doc.get("services"), dict):
        return _compose(doc, where)
    return []
