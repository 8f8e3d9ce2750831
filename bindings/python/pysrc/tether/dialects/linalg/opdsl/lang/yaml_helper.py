"""YAML output of op definitions (``dump_oplib``), through PyYAML (Debian: python3-yaml).

PyYAML is needed only to dump: defining and emitting ops works without it. Objects that dump as
a tagged mapping derive from ``YAMLObject`` and give ``yaml_tag`` and ``to_yaml_custom_dict()``.
"""

__all__ = ["yaml_dump", "yaml_dump_all", "YAMLObject"]


class YAMLObject:
    """Dumps as the mapping ``to_yaml_custom_dict()`` tagged ``yaml_tag``."""

    yaml_tag = None

    def to_yaml_custom_dict(self):
        raise NotImplementedError(type(self).__name__)

    def as_linalg_yaml(self):
        return yaml_dump(self)


_dumper = None


def _get_dumper():
    global _dumper
    if _dumper is None:
        try:
            import yaml
        except ImportError as e:
            raise ModuleNotFoundError(
                "dumping op definitions as YAML needs PyYAML (Debian package python3-yaml)") from e

        class Dumper(yaml.SafeDumper):
            pass

        def tagged(dumper, obj):
            return dumper.represent_mapping(obj.yaml_tag, obj.to_yaml_custom_dict())

        def text(dumper, s):
            style = "|" if len(s.splitlines()) > 1 else None
            return dumper.represent_scalar("tag:yaml.org,2002:str", s, style=style)

        Dumper.add_multi_representer(YAMLObject, tagged)
        Dumper.add_representer(str, text)
        _dumper = (yaml, Dumper)
    return _dumper


def yaml_dump(data, sort_keys=False, **kwargs):
    yaml, dumper = _get_dumper()
    return yaml.dump(data, Dumper=dumper, sort_keys=sort_keys, **kwargs)


def yaml_dump_all(data, sort_keys=False, explicit_start=True, **kwargs):
    yaml, dumper = _get_dumper()
    return yaml.dump_all(data, Dumper=dumper, sort_keys=sort_keys,
                         explicit_start=explicit_start, **kwargs)
