"""The lint parse floor: the least a Python linter can do with the corpus, parse it.

Every *.yaml, *.yml and *.json file under the folders given, read and parsed with PyYAML's C
loader (what `truegreen lint` parses with), nothing checked. `python bench/lint_floor.py DIR...`
prints the number of documents.
"""

import sys
from pathlib import Path

import yaml


def main(folders: list[str]) -> int:
    loader = yaml.CSafeLoader
    documents = 0
    for folder in folders:
        for path in sorted(Path(folder).rglob("*")):
            if path.suffix in (".yaml", ".yml", ".json") and path.is_file():
                documents += sum(1 for _ in yaml.load_all(path.read_bytes(), Loader=loader))
    return documents


if __name__ == "__main__":
    sys.stdout.write(f"{main(sys.argv[1:])}\n")
