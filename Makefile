# DocMind: `make run` serves the app, `make test` runs the test suite.
# Both create .venv/ with Python 3.12 on first use (see scripts/find-python).
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
export HOST PORT

# The MySQL driver builds against system headers, so it is installed only when it is needed:
# DATABASE_URL names MySQL/MariaDB, or DOCMIND_WITH_MYSQL=1 asks for it.
WITH_MYSQL := $(strip $(filter mysql% mariadb%,$(DATABASE_URL))$(filter 1 true yes,$(DOCMIND_WITH_MYSQL)))
STAMPS := $(VENV)/.installed $(if $(WITH_MYSQL),$(VENV)/.installed-mysql)

.PHONY: run test lint install clean-data

$(VENV)/.installed: requirements.txt requirements-bench.txt requirements-dev.txt
	test -x $(PY) || $$(scripts/find-python) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

$(VENV)/.installed-mysql: requirements-mysql.txt $(VENV)/.installed
	$(PY) -m pip install --quiet -r requirements-mysql.txt || { \
	  echo "mysqlclient did not build: it needs the MySQL client headers and pkg-config (Debian/Ubuntu: apt-get install libmariadb-dev pkg-config)" >&2; \
	  exit 1; }
	touch $@

install: $(STAMPS)

run: $(STAMPS)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py bootstrap
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) -m docmind.serve -b $(HOST) -p $(PORT) project.asgi:application

# One pytest-xdist worker per core (each with its own data dir, SQLite/MariaDB test database and Milvus Lite
# file: tests/envplugin.py), in random order (pytest-randomly: PYTEST_ARGS=--randomly-seed=last repeats the
# last order). --dist loadgroup (tests/schedule.py) hands out one test at a time in pytest-django's order
# (tests in a transaction, then serialized-rollback ones, then other transactional ones: tests/conftest.py),
# except that all browser tests go to one worker together, so each browser module's live server is built once
# instead of once a worker. Not --dist loadscope: it reorders modules by size and breaks that order.
# TEST_WORKERS=0 runs in this process.
# Bytecode caches stay on even where the environment turns them off (PYTHONDONTWRITEBYTECODE): each worker and
# each process the tests start (live servers, parser children, manage.py) would compile the project from source
# again, and pytest would rewrite every test module's asserts again, seconds each time.
TEST_WORKERS ?= auto
test: $(STAMPS)
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

# deptry twice (settings in pyproject.toml): the product's code against the runtime requirements, then the whole
# tree, tests and benchmarks included, against every requirements file. lint-imports checks the import floors
# (pyproject.toml's [tool.importlinter]); --no-cache: the whole graph takes well under a second to build.
lint: $(STAMPS)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/deptry .
	$(VENV)/bin/deptry . --requirements-files requirements.txt,requirements-mysql.txt,requirements-bench.txt,requirements-dev.txt \
	  --exclude '^(\.venv|\.git|data|staticfiles)/'
