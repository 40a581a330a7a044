// The app's gRPC-Web clients, generated from proto/ (src/gen, by buf and protoc-gen-es) and
// carried by connect-web's gRPC-Web transport to the gateway that served this page: the app
// needs nothing from the server but the .proto files' calls.
import { createClient, ConnectError, Code } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { fromBinary } from "@bufbuild/protobuf";
import { MatchService } from "./gen/cardarena/v1/service_pb.js";
import { TournamentService } from "./gen/cardarena/v1/tournament_pb.js";
import { LadderService } from "./gen/cardarena/v1/ladder_pb.js";
import { EventSchema } from "./gen/cardarena/v1/game_pb.js";

// A unary call the server refused RESOURCE_EXHAUSTED with a retry delay (a rate, or the
// turns anonymous reads take on a busy server: docs/server.md) is made again once the delay
// has passed, a few times: a refused call did nothing, so repeating it is safe.
const RETRY_AFTER = "cardarena-retry-after-ms";
const RETRIES = 4;
const retryRefused = (next) => async (request) => {
  for (let attempt = 0; ; attempt++) {
    try {
      return await next(request);
    } catch (error) {
      const delay = error instanceof ConnectError && error.code === Code.ResourceExhausted
        ? Number(error.metadata.get(RETRY_AFTER)) : 0;
      if (request.stream || attempt >= RETRIES || !(delay > 0)) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay, 5000)));
    }
  }
};

const transport = createGrpcWebTransport({
  baseUrl: location.origin,
  useBinaryFormat: true,
  interceptors: [retryRefused],
});

export const matches = createClient(MatchService, transport);
export const tournaments = createClient(TournamentService, transport);
export const ladders = createClient(LadderService, transport);
export { ConnectError, Code };

// Call options carrying a seat's token (never in a message: see service.proto).
export function withToken(token, extra = {}) {
  return { ...extra, headers: { authorization: `Bearer ${token}` } };
}

// One stored log entry's exact bytes, as the Event they encode.
export function decodeEvent(bytes) {
  return fromBinary(EventSchema, bytes);
}

// An error's words for people: a ConnectError's message without the "[code]" prefix.
export function errorText(error) {
  if (error instanceof ConnectError) return error.rawMessage || Code[error.code];
  return String((error && error.message) || error);
}
