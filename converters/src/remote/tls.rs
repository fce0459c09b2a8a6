//! The TLS trust of a run: the roots bundled with the client (Mozilla's, as `webpki-roots`
//! ships them) and, in addition, the system's certificate store (`rustls-native-certs`:
//! the platform's store, or the PEM file `SSL_CERT_FILE` and the directory `SSL_CERT_DIR`
//! name when set), so that a company's own CA or a TLS-inspecting proxy's is trusted as
//! curl trusts it.

use std::sync::{Arc, OnceLock};

/// The client configuration with both sets of roots (built once per process). The crypto
/// provider is ring's default, the one ureq's own TLS setup uses (rustls now prefers a
/// provider with post-quantum key exchange, which needs aws-lc-rs and a C toolchain).
#[allow(deprecated)]
pub fn client_config() -> Arc<rustls::ClientConfig> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_protocol_versions(&[&rustls::version::TLS12, &rustls::version::TLS13])
                // The ring provider supports both versions' suites.
                .unwrap_or_else(|_| unreachable!("ring supports TLS 1.2 and 1.3"))
                .with_root_certificates(root_store().0)
                .with_no_client_auth();
            Arc::new(config)
        })
        .clone()
}

/// The bundled roots plus the system's; also how many came from the system (certificates
/// that do not parse are skipped, as a store may hold some).
pub fn root_store() -> (rustls::RootCertStore, usize) {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let native = rustls_native_certs::load_native_certs();
    let (added, _ignored) = roots.add_parsable_certificates(native.certs);
    (roots, added)
}
