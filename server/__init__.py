"""cardarena's server: the grpc.aio service that hosts matches and keeps their durable event logs."""
