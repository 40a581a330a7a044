"""Generated protocol code of cardarena.v1 (see proto/cardarena/v1/*.proto; regenerate with scripts/gen_proto.sh)."""
