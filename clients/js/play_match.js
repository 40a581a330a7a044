#!/usr/bin/env node
// Play one whole cardarena match over gRPC from Node.js, then audit it.
//
//   node clients/js/play_match.js HOST:PORT [game]
//
// Uses only @grpc/grpc-js and @grpc/proto-loader; the .proto files are loaded from
// ../../proto at run time (no generated code). Exits 0 after printing a summary, non-zero
// with a message on stderr on any failure, and never runs longer than the global timeout
// (CARDARENA_JS_TIMEOUT_MS, default 60000).
"use strict";

const crypto = require("node:crypto");
const path = require("node:path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const PROTO_ROOT = path.resolve(__dirname, "..", "..", "proto");
const GLOBAL_TIMEOUT_MS = Number(process.env.CARDARENA_JS_TIMEOUT_MS || 60000);
const CALL_TIMEOUT_MS = 10000;
const PLAYERS = 3;
// A fixed 32-byte seed, so a run is reproducible: bytes 0, 1, ..., 31.
const SEED = Buffer.from(Array.from({ length: 32 }, (_, i) => i));

class CheckFailed extends Error {}

function check(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

function sha256(...parts) {
  const hash = crypto.createHash("sha256");
  for (const part of parts) hash.update(part);
  return hash.digest();
}

// Request ids are unguessable: another seat must not be able to spend this seat's next id.
function requestId() {
  return crypto.randomBytes(16).toString("hex");
}

function loadService() {
  const definition = protoLoader.loadSync("cardarena/v1/service.proto", {
    includeDirs: [PROTO_ROOT],
    keepCase: true, // field names as in the .proto (match_id, not matchId)
    longs: String, // uint64/int64 as decimal strings: no precision loss
    enums: String, // enum values by name ("MATCH_STATUS_ENDED")
    bytes: Buffer, // bytes as Buffer
    defaults: true, // unset fields present with their default
    oneofs: true, // a virtual field naming the set member of each oneof ("kind")
  });
  const loaded = grpc.loadPackageDefinition(definition);
  return loaded.cardarena.v1.MatchService;
}

function authMetadata(token) {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return metadata;
}

function deadline() {
  return new Date(Date.now() + CALL_TIMEOUT_MS);
}

// A unary call as a promise; an error names the method and the status.
function unary(client, method, request, metadata) {
  return new Promise((resolve, reject) => {
    client[method](request, metadata || new grpc.Metadata(), { deadline: deadline() }, (error, response) => {
      if (error) {
        error.method = method;
        reject(error);
      } else {
        resolve(response);
      }
    });
  });
}

function scoreText(score) {
  return score.denominator === "1" ? score.numerator : `${score.numerator}/${score.denominator}`;
}

function sameScores(a, b) {
  return (
    a.length === b.length &&
    a.every((s, i) => s.numerator === b[i].numerator && s.denominator === b[i].denominator)
  );
}

// One seat: read its StreamEvents; answer each YourTurn with its first legal action.
// Resolves with what the seat saw once the seed has been revealed (the last event of a match).
function playSeat(client, matchId, seat, token, streams) {
  return new Promise((resolve, reject) => {
    const seen = { seat, actions: 0, aborted: 0, lastSeq: "0", matchEnded: null, seed: null };
    let finished = false;
    const call = client.StreamEvents(
      { match_id: matchId, seat, after_seq: "0" },
      authMetadata(token), // no deadline on a long-lived stream
    );
    streams.push(call);
    const finish = (error) => {
      if (finished) return;
      finished = true;
      call.cancel();
      if (error) reject(error);
      else resolve(seen);
    };

    const act = async (seq, legal) => {
      check(legal.length > 0, `seat ${seat}: a turn at seq ${seq} offers no legal action`);
      try {
        await unary(
          client,
          "SubmitAction",
          {
            match_id: matchId,
            seat,
            action: legal[0],
            expected_seq: seq,
            request_id: requestId(),
          },
          authMetadata(token),
        );
        seen.actions += 1;
      } catch (error) {
        // ABORTED: something happened since this turn was offered; a newer YourTurn follows.
        if (error.code === grpc.status.ABORTED) {
          seen.aborted += 1;
          return;
        }
        throw error;
      }
    };

    call.on("data", (message) => {
      if (finished) return;
      if (message.kind === "snapshot") {
        const snapshot = message.snapshot;
        if (snapshot.over) {
          finish(); // opened after the end: nothing left to do
        } else if (snapshot.legal_actions.length > 0) {
          // The events that made this seat the one to act came before the stream opened:
          // the snapshot carries the turn instead of a YourTurn.
          act(snapshot.seq, snapshot.legal_actions).catch(finish);
        }
      } else if (message.kind === "event") {
        const event = message.event;
        seen.lastSeq = event.seq;
        if (event.kind === "match_ended") seen.matchEnded = event.match_ended;
        if (event.kind === "seed_revealed") {
          seen.seed = event.seed_revealed.seed;
          finish();
        }
      } else if (message.kind === "your_turn") {
        const turn = message.your_turn;
        act(turn.seq, turn.legal_actions).catch(finish);
      }
    });
    call.on("error", (error) => {
      if (!finished) {
        error.method = `StreamEvents(seat ${seat})`;
        finish(error);
      }
    });
    call.on("end", () => {
      if (!finished) finish(new CheckFailed(`seat ${seat}: the event stream ended before the seed was revealed`));
    });
  });
}

function verifyChain(matchId, entries) {
  let prev = sha256(Buffer.from("cardarena-log-v1"), Buffer.from(matchId, "utf8"));
  entries.forEach((entry, index) => {
    check(entry.seq === String(index + 1), `log entry ${index + 1} has seq ${entry.seq}`);
    const expected = sha256(prev, entry.event);
    check(
      Buffer.compare(expected, entry.hash) === 0,
      `log hash chain breaks at seq ${entry.seq}: expected ${expected.toString("hex")}, got ${entry.hash.toString("hex")}`,
    );
    prev = expected;
  });
  return prev;
}

async function main(address, gameArg, streams) {
  const MatchService = loadService();
  const api = new MatchService(address, grpc.credentials.createInsecure());

  const { games } = await unary(api, "ListGames", {});
  check(games.length > 0, "ListGames returned no game");
  const names = games.map((g) => g.name);
  const game = gameArg || (names.includes("pentathlon") ? "pentathlon" : names[0]);
  const description = games.find((g) => g.name === game);
  check(description, `unknown game ${game}; the server offers: ${names.join(", ")}`);
  const players = description.players.includes(PLAYERS) ? PLAYERS : description.default_players;
  console.log(`games: ${names.join(", ")}`);

  const created = await unary(api, "CreateMatch", { game, players, seed: SEED });
  const matchId = created.match.match_id;
  const commitment = created.match.seed_commitment;
  check(matchId, "CreateMatch returned no match_id");
  console.log(`match ${matchId}: ${game}, ${players} players, seed commitment ${commitment}`);

  const tickets = [];
  for (let i = 0; i < players; i += 1) {
    // Each seat mixes 32 fresh random bytes into the deal seed (docs/rules.md §4.8).
    const joined = await unary(api, "JoinMatch", {
      match_id: matchId,
      name: `js${i}`,
      contribution: crypto.randomBytes(32),
    });
    check(joined.token, `JoinMatch gave seat ${joined.seat} no token`);
    tickets.push({ seat: joined.seat, token: joined.token });
  }
  check(
    new Set(tickets.map((t) => t.seat)).size === players,
    `JoinMatch gave seats ${tickets.map((t) => t.seat).join(",")}`,
  );

  const seats = await Promise.all(tickets.map((t) => playSeat(api, matchId, t.seat, t.token, streams)));

  // --- the audit ---------------------------------------------------------------------------
  const { match } = await unary(api, "GetMatch", { match_id: matchId });
  check(match.status === "MATCH_STATUS_ENDED", `GetMatch status is ${match.status}, not MATCH_STATUS_ENDED`);
  check(Buffer.compare(match.seed, SEED) === 0, `GetMatch revealed seed ${match.seed.toString("hex")}, not the one sent`);
  for (const s of seats) {
    check(s.seed && Buffer.compare(s.seed, SEED) === 0, `seat ${s.seat}: SeedRevealed is not the seed sent`);
  }
  const recomputed = sha256(Buffer.from("cardarena-seed-v1"), SEED).toString("hex");
  check(recomputed === commitment, `sha256("cardarena-seed-v1"+seed) = ${recomputed} != commitment ${commitment}`);
  check(match.seed_commitment === commitment, "the seed commitment changed during the match");

  for (const s of seats) {
    check(s.matchEnded, `seat ${s.seat} saw no MatchEnded event`);
    check(
      sameScores(s.matchEnded.totals, match.totals),
      `seat ${s.seat}: MatchEnded totals [${s.matchEnded.totals.map(scoreText)}] != GetMatch totals [${match.totals.map(scoreText)}]`,
    );
    check(
      s.matchEnded.winners.join(",") === match.winners.join(","),
      `seat ${s.seat}: MatchEnded winners [${s.matchEnded.winners}] != GetMatch winners [${match.winners}]`,
    );
    check(s.lastSeq === match.last_seq, `seat ${s.seat} ended at seq ${s.lastSeq}, the match at ${match.last_seq}`);
  }

  const log = await unary(api, "GetMatchLog", { match_id: matchId });
  check(log.entries.length > 0, "GetMatchLog returned no entry");
  check(
    String(log.entries.length) === match.last_seq,
    `GetMatchLog has ${log.entries.length} entries, the match's last seq is ${match.last_seq}`,
  );
  check(Buffer.compare(log.seed, SEED) === 0, "GetMatchLog seed is not the seed sent");
  const head = verifyChain(matchId, log.entries);
  check(Buffer.compare(head, match.last_hash) === 0, "the recomputed chain head differs from GetMatch last_hash");

  const actions = seats.reduce((n, s) => n + s.actions, 0);
  const aborted = seats.reduce((n, s) => n + s.aborted, 0);
  api.close();
  console.log(`played: ${actions} actions (${aborted} stale turns skipped), ${match.last_seq} events`);
  console.log(`totals: ${match.totals.map(scoreText).join(" ")}; winners: seat ${match.winners.join(", seat ")}`);
  console.log(`seed revealed matches the commitment; log hash chain verified (${log.entries.length} entries, head ${head.toString("hex").slice(0, 16)}…)`);
  console.log(`OK match ${matchId} ${game} ended`);
}

function describe(error) {
  if (error instanceof CheckFailed) return `check failed: ${error.message}`;
  if (error && typeof error.code === "number") {
    const name = Object.keys(grpc.status).find((k) => grpc.status[k] === error.code) || error.code;
    return `gRPC ${error.method || "call"} failed: ${name}: ${error.details || error.message}`;
  }
  return (error && error.stack) || String(error);
}

if (require.main === module) {
  const [address, game] = process.argv.slice(2);
  if (!address || address.startsWith("-")) {
    console.error("usage: node play_match.js HOST:PORT [game]");
    process.exit(2);
  }
  const streams = [];
  const timer = setTimeout(() => {
    console.error(`FAIL: timed out after ${GLOBAL_TIMEOUT_MS} ms`);
    process.exit(1);
  }, GLOBAL_TIMEOUT_MS);
  main(address, game, streams).then(
    () => {
      clearTimeout(timer);
      process.exit(0);
    },
    (error) => {
      clearTimeout(timer);
      for (const call of streams) call.cancel();
      console.error(`FAIL: ${describe(error)}`);
      process.exit(1);
    },
  );
}
