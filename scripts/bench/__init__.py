"""Server load benchmark: many concurrent 4-player matches against a real ``cardarena serve``.

Why: the issue's target is 1,000 concurrent matches on one server process, with durable logging
on, at no less than 60% of what gRPC itself can carry. This benchmark gives both numbers from
one run: the real server (fresh temporary data dir, SQLite store, ``synchronous=FULL``) and a
*no-op ceiling*, a grpc.aio servicer that answers the same RPCs instantly from memory (no store,
no engine, no checks), each driven by the identical client code at the same concurrency. It is
a benchmark run on purpose, not a test: it asserts nothing about speed.

Both servers run in their own process (the no-op one is the entry script with
``--noop-server``), on 127.0.0.1 only; the load comes from ``--client-procs`` other processes.
Everything stops by itself: setup is bounded by ``--setup-timeout``, play by ``--seconds``.

Each match slot creates a match, joins its four seats, and each seat then keeps ONE
``StreamEvents`` stream open for the whole match and acts on what it receives; no stream is
reopened and nothing is polled. ``--pattern`` says how a seat knows its turn (``turns``, the
default, acts on the stream's ``YourTurn`` prompts; ``replica`` and ``resnapshot``: see
``bots.py``).

Reported, per server: player actions/s (successful SubmitAction calls in the window),
client-measured SubmitAction latency p50/p99, stream messages per action, matches completed
(slots start a new match when theirs ends, so the concurrency stays at ``--matches``), errors
by RPC and status code, server CPU per action (all its threads, from ``/proc``), and the server's
VmRSS before and after the matches are created and joined, and once every stream is open (per
hosted match). The machine is shared, so besides the actions/s ratio the report gives the ratio
of server CPU per action, which other load on the machine disturbs less.

Replicas (``--replicas 1,2,3``): the cost of sharing one PostgreSQL. One run measures, with the
same clients at the same concurrency, the SQLite single process, the no-op ceiling (cheap, and
it shows what the clients and gRPC alone cost on this machine), then for each N a set of N
``cardarena serve --store postgresql://...?schema=bench_<random>`` replicas on 127.0.0.1:0, each
set on a fresh schema that is dropped (``DROP SCHEMA ... CASCADE``) when its run ends, also when
the run is interrupted (Ctrl-C, SIGTERM). Clients reach replicas at random, as behind one
load-balanced address: a match is created on a random replica (which then owns it) and each seat
joins, streams and submits through a random one, so with N replicas about (N-1)/N of the actions
are forwarded to the owner. The table gives actions/s, SubmitAction p50/p99, server CPU per
action summed over the replica processes, the CPU of PostgreSQL's own processes per action
(from ``/proc``: the database runs on this machine), the forwarded fraction and group commits
per action (from each replica's Prometheus metrics), table reads per action in the run's schema
(``pg_stat_user_tables``), errors, and the ratios to the SQLite process. If PostgreSQL does not
answer, the benchmark says so and exits with status 2.

How to run (from the repository root)::

    .venv/bin/python scripts/bench_server.py                        # 200 matches, about 60 s
    .venv/bin/python scripts/bench_server.py --matches 1000 --seconds 60
    .venv/bin/python scripts/bench_server.py --repeats 3 --seconds 90   # medians of 3 runs each
    .venv/bin/python scripts/bench_server.py --pattern resnapshot --seconds 30
    .venv/bin/python scripts/bench_server.py --client-procs 2 --channels 8
    .venv/bin/python scripts/bench_server.py --py-spy /tmp/server.svg   # needs py-spy on PATH
    .venv/bin/python scripts/bench_server.py --replicas 1,2,3 --matches 100 --seconds 120
    .venv/bin/python scripts/bench_server.py --replicas 1,2,3 --repeats 3 --seconds 450 \\
        --store-url postgresql://postgres@127.0.0.1:5432/test       # the default database

``--seconds`` is the total play time, split evenly over the 2 x ``--repeats`` server runs
(with ``--replicas 1,2,3``: the 5 configurations x ``--repeats``); setup (creating, joining,
opening streams) and shutdown come on top of it.

The parts, one concern each (imports run downwards)::

    cli.py       the flags and their checks; runs a plan, or the no-op server
    compare.py   the two plans: SQLite vs the ceiling, and --replicas; repeats, order, medians
    report.py    the printed tables
    run.py       one run of one configuration: servers, clients, the measured window
    load.py      a client process keeping its share of the matches in play
    bots.py      one seat of one match, per --pattern; what the clients count
    measure.py   /proc CPU and memory, the servers' Prometheus counters
    procs.py     starting and stopping the server processes, and py-spy
    postgres.py  the fresh schema of a replicated run, and its table reads
    noop.py      the no-op ceiling server
    common.py    the names they share
"""
