/// The providers file (`CHORUS_PROVIDERS`) of the contract: one OpenAI-compatible server named kokoro, as the tests of
/// the file and of renders through the server it names use it.
public enum ProvidersFileContract {
    public static let json = #"""
        {"kokoro": {"kind": "openai", "base_url": "http://127.0.0.1:8880/v1", "api_key_env": "KOKORO_API_KEY", "model": "kokoro",
                    "voices": ["af_heart", "am_adam"]}}
        """#
}
