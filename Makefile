# Conveniences over scripts/, which are what the README and CI use.
.PHONY: install main test check bench clean

install:
	bash scripts/bootstrap.sh

main:
	bash scripts/main.sh

test:
	bash scripts/test.sh

check: install
	.venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/mypy && .venv/bin/lint-imports

bench:
	bash scripts/bench.sh

clean:
	rm -rf .venv build .mypy_cache .pytest_cache .ruff_cache .hypothesis
