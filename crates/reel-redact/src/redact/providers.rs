//! `provider-token` (`reel/3`): the documented token formats of the providers agents
//! hold keys for, as one rule.
//!
//! Why one rule of many formats: each format is a fixed prefix and a body of known
//! alphabet and length, so they share a matcher (one regex, one prefilter group of
//! prefixes) and one line in `--help`; giving each its own rule would make a rule list
//! of a hundred names that differ only in their prefix. The formats are written from
//! the providers' own documentation and the formats public secret-scanning rule sets
//! (gitleaks, trufflehog, GitHub secret scanning) list, as reel's own patterns. A
//! format needs a prefix or structure distinctive enough that random text, hashes,
//! UUIDs and ids never take it: a bare 32-character hex key (Twilio's auth token,
//! Azure OpenAI's key) is left to the context rules (`secret-assignment`,
//! `secret-keys`), which see its label.
//!
//! Every match is replaced whole. The table is data: [`FORMATS`] is what `--help` and
//! the README list, and a unit test checks each example matches and each look-alike
//! does not.

/// One documented token format.
pub(crate) struct Format {
    /// Whose token (for `--help`).
    pub(crate) provider: &'static str,
    /// The regex of the token (Rust syntax, ASCII), without word boundaries.
    pub(crate) pattern: &'static str,
    /// Literals one of which every match contains (the prefilter's).
    pub(crate) literals: &'static [&'static str],
}

const fn f(
    provider: &'static str,
    pattern: &'static str,
    literals: &'static [&'static str],
) -> Format {
    Format {
        provider,
        pattern,
        literals,
    }
}

/// The base64 of a Discord user id (17–20 ASCII digits) starts with one of these:
/// the first digit fixes two characters, the second digit the third.
const DISCORD_ID_STARTS: &[&str] = &[
    "MTA", "MTE", "MTI", "MTM", "MTQ", "MTU", "MTY", "MTc", "MTg", "MTk", "MjA", "MjE", "MjI",
    "MjM", "MjQ", "MjU", "MjY", "Mjc", "Mjg", "Mjk", "MzA", "MzE", "MzI", "MzM", "MzQ", "MzU",
    "MzY", "Mzc", "Mzg", "Mzk", "NDA", "NDE", "NDI", "NDM", "NDQ", "NDU", "NDY", "NDc", "NDg",
    "NDk", "NTA", "NTE", "NTI", "NTM", "NTQ", "NTU", "NTY", "NTc", "NTg", "NTk", "NjA", "NjE",
    "NjI", "NjM", "NjQ", "NjU", "NjY", "Njc", "Njg", "Njk", "NzA", "NzE", "NzI", "NzM", "NzQ",
    "NzU", "NzY", "Nzc", "Nzg", "Nzk", "ODA", "ODE", "ODI", "ODM", "ODQ", "ODU", "ODY", "ODc",
    "ODg", "ODk", "OTA", "OTE", "OTI", "OTM", "OTQ", "OTU", "OTY", "OTc", "OTg", "OTk",
];

/// Every format, roughly by provider family. Order does not matter: one alternation.
pub(crate) const FORMATS: &[Format] = &[
    // Model providers.
    f("Groq", "gsk_[A-Za-z0-9]{20,}", &["gsk_"]),
    f("xAI", "xai-[A-Za-z0-9]{20,}", &["xai-"]),
    f("Perplexity", "pplx-[A-Za-z0-9]{20,}", &["pplx-"]),
    f("Cerebras", "csk-[A-Za-z0-9]{20,}", &["csk-"]),
    f("Replicate", "r8_[A-Za-z0-9]{20,}", &["r8_"]),
    f("Fireworks", "fw_[A-Za-z0-9]{20,}", &["fw_"]),
    f("Voyage AI", "pa-[A-Za-z0-9_-]{40,}", &["pa-"]),
    f("Jina AI", "jina_[A-Za-z0-9_-]{30,}", &["jina_"]),
    f("ElevenLabs", "sk_[a-f0-9]{40,}", &["sk_"]),
    f(
        "Hugging Face org",
        "api_org_[A-Za-z0-9]{30,}",
        &["api_org_"],
    ),
    f(
        "LangSmith",
        "lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}",
        &["lsv2_"],
    ),
    f("Pinecone", "pcsk_[A-Za-z0-9_]{40,}", &["pcsk_"]),
    f("E2B", "e2b_[a-f0-9]{40}", &["e2b_"]),
    f("Tavily", "tvly-[A-Za-z0-9-]{20,}", &["tvly-"]),
    f("Firecrawl", "fc-[a-f0-9]{32}", &["fc-"]),
    f("Databricks", "dapi[a-f0-9]{32}(?:-[0-9])?", &["dapi"]),
    // Clouds and their key services.
    f(
        "Google OAuth access token",
        "ya29\\.[A-Za-z0-9_-]{20,}",
        &["ya29."],
    ),
    f(
        "Google OAuth refresh token",
        "1//0[A-Za-z0-9_-]{40,}",
        &["1//0"],
    ),
    f(
        "Google OAuth client secret",
        "GOCSPX-[A-Za-z0-9_-]{20,}",
        &["GOCSPX-"],
    ),
    f(
        "AWS session token",
        "(?:FwoGZXIvYXdzE|IQoJb3JpZ2luX2Vj)[A-Za-z0-9+/=]{40,}",
        &["FwoGZXIvYXdzE", "IQoJb3JpZ2luX2Vj"],
    ),
    f(
        "Azure AD client secret",
        "[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}",
        &[
            "0Q~", "1Q~", "2Q~", "3Q~", "4Q~", "5Q~", "6Q~", "7Q~", "8Q~", "9Q~",
        ],
    ),
    f(
        "Azure DevOps PAT",
        "[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}",
        &["AZDO"],
    ),
    f("Alibaba Cloud", "LTAI[A-Za-z0-9]{20}", &["LTAI"]),
    f(
        "DigitalOcean",
        "do[opr]_v1_[A-Za-z0-9]{32,}",
        &["dop_v1_", "doo_v1_", "dor_v1_"],
    ),
    f(
        "HashiCorp Vault",
        "hv[sbr]\\.[A-Za-z0-9_-]{24,}",
        &["hvs.", "hvb.", "hvr."],
    ),
    f(
        "Terraform Cloud",
        "[A-Za-z0-9]{14}\\.atlasv1\\.[A-Za-z0-9_=-]{60,}",
        &[".atlasv1."],
    ),
    f("Heroku", "HRKU-[A-Za-z0-9_-]{40,}", &["HRKU-"]),
    f(
        "Fly.io",
        "fm[12][ar]?_[A-Za-z0-9+/=_-]{40,}",
        &["fm1_", "fm2_", "fm1a_", "fm2a_", "fm1r_", "fm2r_"],
    ),
    f("Netlify", "nfp_[A-Za-z0-9]{36,}", &["nfp_"]),
    f("Render", "rnd_[A-Za-z0-9]{20,}", &["rnd_"]),
    f("Neon", "napi_[A-Za-z0-9]{40,}", &["napi_"]),
    f(
        "Supabase",
        "(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{20,})",
        &["sbp_", "sb_secret_"],
    ),
    f(
        "PlanetScale",
        "pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,}",
        &["pscale_"],
    ),
    // Service tokens carry their environment: `dp.st.prd.<40+>`.
    f(
        "Doppler",
        "dp\\.(?:pt|st|sa|ct|scim|audit)\\.(?:[a-z0-9_-]{1,32}\\.)?[A-Za-z0-9]{40,}",
        &["dp."],
    ),
    f("Pulumi", "pul-[a-f0-9]{40}", &["pul-"]),
    f(
        "Docker Hub",
        "dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,}",
        &["dckr_"],
    ),
    f("Tailscale", "tskey-[a-z]+-[A-Za-z0-9_-]{10,}", &["tskey-"]),
    f(
        "Cloudflare origin CA",
        "v1\\.0-[a-f0-9]{24}-[a-f0-9]{146}",
        &["v1.0-"],
    ),
    // Code hosting, CI and registries.
    f("PyPI", "pypi-[A-Za-z0-9_-]{32,}", &["pypi-"]),
    f("RubyGems", "rubygems_[a-f0-9]{48}", &["rubygems_"]),
    f("NuGet", "oy2[a-z0-9]{43}", &["oy2"]),
    f("Clojars", "CLOJARS_[a-z0-9]{60}", &["CLOJARS_"]),
    f("Bitbucket", "ATBB[A-Za-z0-9_=.-]{32,}", &["ATBB"]),
    f(
        "Atlassian",
        "AT[AC]TT3[A-Za-z0-9_=-]{50,}",
        &["ATATT3", "ATCTT3"],
    ),
    f("Buildkite", "bkua_[a-f0-9]{40}", &["bkua_"]),
    f("CircleCI", "CCIPAT_[A-Za-z0-9_]{20,}", &["CCIPAT_"]),
    f("Sourcegraph", "sgp_[A-Za-z0-9_]{40,}", &["sgp_"]),
    f(
        "JFrog Artifactory",
        "(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})",
        &["AKCp", "cmVmd"],
    ),
    f(
        "Harness",
        "pat\\.[A-Za-z0-9_-]{22}\\.[0-9a-f]{24}\\.[A-Za-z0-9]{20}",
        &["pat."],
    ),
    f("Postman", "PMAK-[A-Za-z0-9-]{40,}", &["PMAK-"]),
    f("Prefect", "pnu_[A-Za-z0-9]{36}", &["pnu_"]),
    f("ReadMe", "rdme_[a-z0-9]{70}", &["rdme_"]),
    // Observability.
    f(
        "Grafana",
        "(?:glsa_[A-Za-z0-9_]{20,}|glc_[A-Za-z0-9+/]{32,}={0,2}|eyJrIjoi[A-Za-z0-9+/=_-]{30,})",
        &["glsa_", "glc_", "eyJrIjoi"],
    ),
    f(
        "Sentry",
        "sntry[su]_[A-Za-z0-9+/=_]{40,}",
        &["sntrys_", "sntryu_"],
    ),
    f(
        "New Relic",
        "NR(?:AK|JS|II|RA)-[A-Za-z0-9]{20,}",
        &["NRAK-", "NRJS-", "NRII-", "NRRA-"],
    ),
    f(
        "Dynatrace",
        "dt0c01\\.[A-Z0-9]{24}\\.[A-Z0-9]{64}",
        &["dt0c01."],
    ),
    // Payments and commerce.
    f(
        "Square",
        "(?:sq0(?:csp|atp)-[A-Za-z0-9_-]{22,}|EAAA[A-Za-z0-9_-]{60,})",
        &["sq0csp-", "sq0atp-", "EAAA"],
    ),
    f(
        "Shopify",
        "shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        &["shpat_", "shpca_", "shppa_", "shpss_"],
    ),
    f(
        "Braintree",
        "access_token\\$(?:production|sandbox)\\$[a-z0-9]{16}\\$[a-f0-9]{32}",
        &["access_token$"],
    ),
    f(
        "Duffel",
        "duffel_(?:test|live)_[A-Za-z0-9_=-]{40,}",
        &["duffel_"],
    ),
    f("EasyPost", "EZ[AT]K[A-Za-z0-9]{54}", &["EZAK", "EZTK"]),
    f(
        "Flutterwave",
        "FLWSECK(?:_TEST)?-[a-f0-9]{32}-X",
        &["FLWSECK"],
    ),
    f("Shippo", "shippo_(?:live|test)_[a-f0-9]{40}", &["shippo_"]),
    // Messaging and productivity.
    f(
        "Discord bot token",
        "[MNO][A-Za-z0-9_-]{22,27}\\.[A-Za-z0-9_-]{6,7}\\.[A-Za-z0-9_-]{27,40}",
        DISCORD_ID_STARTS,
    ),
    // Also in its API URL, `/bot<token>/`, where no word boundary comes before the
    // digits.
    f(
        "Telegram bot token",
        "(?:bot)?[0-9]{8,10}:AA[A-Za-z0-9_-]{30,}",
        &[":AA"],
    ),
    f("Mailgun", "key-[0-9a-f]{32}", &["key-"]),
    f("Mailchimp", "[0-9a-f]{32}-us[0-9]{1,2}", &["-us"]),
    f("Resend", "re_[A-Za-z0-9]{8}_[A-Za-z0-9]{20,}", &["re_"]),
    f(
        "Linear",
        "lin_(?:api|oauth)_[A-Za-z0-9]{32,}",
        &["lin_api_", "lin_oauth_"],
    ),
    f(
        "Notion",
        "(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})",
        &["secret_", "ntn_"],
    ),
    f("Figma", "figd_[A-Za-z0-9_-]{40,}", &["figd_"]),
    f("Dropbox", "sl\\.[A-Za-z0-9_-]{130,}", &["sl."]),
    f("Adafruit IO", "aio_[A-Za-z0-9]{28}", &["aio_"]),
    f("Okta", "SSWS [A-Za-z0-9_-]{40,}", &["SSWS "]),
    f(
        "1Password service account",
        "ops_eyJ[A-Za-z0-9+/=_-]{50,}",
        &["ops_eyJ"],
    ),
    f(
        "Mapbox secret token",
        "sk\\.eyJ[A-Za-z0-9_.-]{20,}",
        &["sk.eyJ"],
    ),
    f(
        "Twitter bearer",
        "A{21}[A-Za-z0-9]{10,}%[A-Za-z0-9%]{20,}",
        &["AAAAAAAAAAAAAAAAAAAAA"],
    ),
    f(
        "age secret key",
        "AGE-SECRET-KEY-1[0-9A-Z]{50,}",
        &["AGE-SECRET-KEY-1"],
    ),
];

/// The rule's regex: every format, after an ASCII word boundary. None after it: a body
/// may end in `-`, where `\b` would need a word character to follow.
pub(crate) fn regex() -> String {
    let b = r"(?-u:\b)";
    let alternatives: Vec<String> = FORMATS
        .iter()
        .map(|f| format!("(?:{})", f.pattern))
        .collect();
    format!("{b}(?:{})", alternatives.join("|"))
}

/// Every format's literals, for the prefilter.
pub(crate) fn literals() -> &'static [&'static str] {
    static ALL: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        FORMATS
            .iter()
            .flat_map(|f| f.literals.iter().copied())
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    #[test]
    fn every_format_has_literals_and_compiles_alone() {
        for format in FORMATS {
            assert!(!format.literals.is_empty(), "{}", format.provider);
            Regex::new(format.pattern).unwrap();
        }
    }

    #[test]
    fn the_rule_compiles() {
        Regex::new(&regex()).unwrap();
    }
}
