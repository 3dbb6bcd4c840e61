// reel-test: replay MCP servers and LLM APIs recorded by reel, in any test runner.
// `reelServer` hands a stdio MCP client a command line; `reelLlm` runs a loopback
// provider. Both replay a tape when there is one and record it otherwise (the record
// mode says which), and both turn reel's miss report into a thrown Error.

export { reelServer, ReelReplayError } from "./server.js";
export { reelLlm } from "./llm.js";
export { ReelSetupError, findReel, recordMode } from "./reel.js";
