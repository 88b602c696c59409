// The retry policy, the one outbound HTTP client and secret redaction are part of the engine's configuration.
@_exported public import ChorusOutbound
