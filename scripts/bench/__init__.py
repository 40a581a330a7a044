"""Server load benchmark: many concurrent 4-player matches against a real ``cardarena serve``.

Why: the targets (issue 16) are 5,000 concurrent matches on one server process, with durable
logging on, at no less than 80% of what gRPC itself can carry, on both call patterns. This
benchmark gives both numbers from one run: the real server (fresh temporary data dir, SQLite store, ``synchronous=FULL``) and a
*no-op ceiling*, a grpc.aio servicer that answers the same RPCs instantly from memory (no store,
no engine, no checks), each driven by the identical client code at the same concurrency. It is
a benchmark run on purpose, not a test: it asserts nothing about speed.

Both servers run in their own process (the no-op one is the entry script with
``--noop-server``), on 127.0.0.1 only; the load comes from ``--client-procs`` other processes.
Everything stops by itself: setup is bounded by ``--setup-timeout``, play by ``--seconds``.

Each match slot creates a match, joins its four seats, and each seat then keeps ONE
``StreamEvents`` stream open for the whole match and acts on what it receives; no stream is
reopened and nothing is polled. ``--pattern`` says how a seat knows its turn and acts
(``turns``, the default, acts on the stream's ``YourTurn`` prompts with unary SubmitAction;
``play`` does the same on one bidirectional ``Play`` stream per seat, which the no-op server
implements as cheaply as its unary path; the seats open their streams (Play or StreamEvents)
``batched``, a write's events on one message, unless ``--unbatched``; ``turns,play`` measures
both, each beside its ceiling;
``replica`` and ``resnapshot``: see ``bots.py``).

Other questions, each a mode of the same command, each with its peer measured in the same run:

* ``--rate R|half``: paced, open-loop load (``paced.py``): each match acts on a fixed schedule,
  latency p50/p90/p99/max counted from each action's scheduled time, so a slow server cannot
  hide behind its own slowness; ``half`` first measures the capacity (closed loop) and paces at
  half of it. Peers: the no-op ceiling at the same pace, and the capacity.
* ``--matches 5000``: many matches in one process; the clients share ``--channels`` connections
  per process (streams are multiplexed), so it fits in an open-file limit of 1,024
  (``--nofile 1024`` lowers the limit to show it); the report gives open files, errors (with
  the status message of the first of each kind), RSS per hosted match and throughput.
* ``--restart N``: time to serving after SIGKILL and SIGTERM with N unfinished matches, beside a
  start on an empty data dir (``restart.py``).
* ``--tournament DEALS``: both tournament paths with random bots, side by side: hosted by the
  server (the launcher starts one ``cardarena bot connect`` process per entrant; the bots'
  start timed apart) and the in-process runner (``run_tournament``), beside the bench's
  closed-loop ceiling on the same game, each path's share of it (``tournament.py``).

Reported, per server: player actions/s (acknowledged actions in the window), client-measured
action latency p50/p90/p99/max, the server's own mean action and group-commit times and commits
per action (from its Prometheus metrics), stream messages per action, matches completed (slots
start a new match when theirs ends, so the concurrency stays at ``--matches``), errors by RPC
and status code, server CPU per action (all its threads, from ``/proc``), the share of the
window the server's event-loop thread spent on a core and runnable but waiting for one (the
kernel's ``schedstat``: a loop runnable nearly all the time is the limit), the server's VmRSS
before and after the matches are created and joined, and once every stream is open (per hosted
match), and the open files of the server and of the busiest client process. The machine is shared, so besides the actions/s ratio the report gives the ratio
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
    .venv/bin/python scripts/bench_server.py --pattern turns,play --repeats 3 --seconds 120
    .venv/bin/python scripts/bench_server.py --rate half --matches 1000 --seconds 90
    .venv/bin/python scripts/bench_server.py --rate 2 --matches 200 --seconds 40
    .venv/bin/python scripts/bench_server.py --matches 5000 --seconds 60 --nofile 1024
    .venv/bin/python scripts/bench_server.py --restart 5000 --repeats 2
    .venv/bin/python scripts/bench_server.py --tournament 40 --concurrency 8 --repeats 3
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

    cli.py         the flags and their checks; runs a plan, or the no-op server
    restart.py     --restart: unfinished matches, stops and starts, timed
    tournament.py  --tournament: hosted, in-process and the ceiling per repeat; the table
    hosted.py      a hosted tournament: the launcher and its bot processes, timed
    inprocess.py   a tournament of run_tournament in a process of its own; what a run measures
    paced.py       --rate: the paced plans (fixed rate, half the capacity) and their report
    compare.py     the two plans: SQLite vs the ceiling, and --replicas; repeats, order, medians
    report.py      the printed tables
    run.py         one run of one configuration: servers, clients, the measured window
    load.py        a client process keeping its share of the matches in play
    playbot.py     one seat on one Play stream (--pattern play)
    bots.py        one seat of one match, per --pattern; what the clients count
    pacing.py      a paced match's schedule (--rate)
    measure.py     /proc CPU, memory and open files, the servers' Prometheus counters
    procs.py       starting and stopping the server processes, and py-spy
    postgres.py    the fresh schema of a replicated run, and its table reads
    noop.py        the no-op ceiling server (the unary calls, the streams, Play)
    common.py      the names they share
"""
