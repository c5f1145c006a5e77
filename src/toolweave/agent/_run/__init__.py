"""The run loop's internals: one `Run` per `Agent.run`, its frozen `RunConfig`, tool
dispatch through the gates, result shaping and the answer check. Nothing here is public."""
