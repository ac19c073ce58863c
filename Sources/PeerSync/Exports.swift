// The public face of the library: the CLI (and any app embedding the agent) imports
// `PeerSync` alone and sees the model's values, the household's rules and the agent.
// The store, identity, protocol, transport and discovery layers stay behind it.
@_exported import PulseHousehold
@_exported import PulseModel
// Starting another program (`systemctl`, a browser), the one way the agent's hooks do too.
@_exported import PulseSystem
