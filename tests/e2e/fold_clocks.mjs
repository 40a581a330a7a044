// The web table's fold of the clocks (src/model.js), run in Node on a log the test sends:
// each entry's bytes in base64, one JSON list on stdin. Prints, after each entry, what the
// table says each seat has left ({ bank, round }, as clocksLeft gives them with no turn in
// progress), then what the seat to act has left part-way through a turn, and how the table
// writes a few durations. Bundled by esbuild first (the sources are ES modules).
import { fromBinary } from "@bufbuild/protobuf";
import { EventSchema } from "../../clients/web/src/gen/cardarena/v1/game_pb.js";
import { newState, applyEvent, applyYourTurn, clocksLeft } from "../../clients/web/src/model.js";
import { duration } from "../../clients/web/src/table.js";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const entries = JSON.parse(Buffer.concat(chunks).toString()).map((b64) => fromBinary(EventSchema, Buffer.from(b64, "base64")));
const state = newState(0);
const folded = entries.map((event) => {
  applyEvent(state, event);
  state.toAct = null; // no turn in progress: what the log leaves each seat
  return Array.from({ length: state.players }, (_, seat) => clocksLeft(state, seat));
});
// Seat 1 is prompted with 4 s left of its bank; 1.5 s later the table counts 2.5 s.
const now = 1_800_000_000_000;
state.over = false;
applyYourTurn(state, 1, { legalActions: [], deadlineUnixMs: BigInt(now + 4000), bankMs: 4000, roundMs: 9000 });
const turn = { prompted: clocksLeft(state, 1, now), later: clocksLeft(state, 1, now + 1500), after: clocksLeft(state, 1, now + 6000), other: clocksLeft(state, 0, now + 1500) };
const durations = [0, 4250, 9999, 10000, 59999, 65000, 3600000].map(duration);
process.stdout.write(JSON.stringify({ folded, turn, durations }));
