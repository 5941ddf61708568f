#!/usr/bin/env python3
"""Turns docs/openapi.yaml into the C++ source that gesso-server serves at /api/v1/openapi.json.

    embed_openapi.py docs/openapi.yaml OUT.cpp

The YAML must hold only what JSON can (no dates, no anchors' aliases of other types); a document that
does not is refused with the path of the first offending value, so the build fails naming it.
"""
import json
import sys

try:
    import yaml
except ImportError:
    sys.exit("embed_openapi.py: PyYAML is missing (Debian: apt-get install python3-yaml; "
             "deploy/install-deps.sh installs it)")

DELIMITER = "gesso_openapi"


def check(value, where):
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                sys.exit(f"embed_openapi.py: {where}: key {key!r} is not a string")
            check(item, f"{where}/{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check(item, f"{where}/{index}")
    elif value is not None and not isinstance(value, (str, int, float, bool)):
        sys.exit(f"embed_openapi.py: {where}: {type(value).__name__} {value!r} is not JSON; quote it")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: embed_openapi.py docs/openapi.yaml OUT.cpp")
    with open(sys.argv[1], encoding="utf-8") as source:
        document = yaml.safe_load(source)
    check(document, "#")
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    if ")" + DELIMITER + '"' in text:
        sys.exit("embed_openapi.py: the document contains the raw string's delimiter")
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        out.write("// Generated from docs/openapi.yaml by server/api/embed_openapi.py; edit the YAML.\n")
        out.write('#include "server/api/openapi_document.hpp"\n\n')
        out.write("namespace gesso::api {\n\n")
        out.write("std::string_view openapi_document() {\n")
        out.write(f'  static constexpr char text[] = R"{DELIMITER}({text}){DELIMITER}";\n')
        out.write("  return {text, sizeof text - 1};\n")
        out.write("}\n\n}  // namespace gesso::api\n")


if __name__ == "__main__":
    main()
