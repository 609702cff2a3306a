"""SGLang troubleshooting assistant: paste a trace or a server log, get the verified fix."""
