//! Proxies: a model read through an HTTP proxy (the API, the small files and the weights'
//! ranges, on both of the server's host names) converts to the same bytes; `NO_PROXY`
//! sends the same requests directly; a proxy that is not an `http://` URL is refused.

use ggufkit_converters::remote::proxy::Proxies;
use ggufkit_testsupport::http_proxy::HttpProxy;

use super::*;

fn proxied(server: &HubServer, vars: &[(&str, &str)]) -> Result<Arc<Client>, RemoteError> {
    let proxies = Proxies::from_vars(&|k| {
        vars.iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    });
    let ep = Endpoint::new(&server.endpoint(), None).unwrap();
    Client::with_proxies(ep, fast_options(), proxies).map(Arc::new)
}

#[test]
fn a_model_read_through_an_http_proxy_converts_identically() {
    let (server, scratch, files, commit) = serve_fixture("llama-spm");
    let want = local(&scratch, &files, &commit, false).unwrap();
    let proxy = HttpProxy::start();
    let client = proxied(&server, &[("HTTP_PROXY", &proxy.url())]).unwrap();
    let snap = snapshot(&scratch, client, "test/llama-spm").unwrap();
    let got = convert(&snap.dir, &scratch.path().join("proxied.gguf"), false).unwrap();
    assert!(got == want, "the proxied conversion differs");
    let log = proxy.log();
    let port = server.endpoint().rsplit(':').next().unwrap().to_string();
    for needle in [
        format!("http://127.0.0.1:{port}/api/models/test/llama-spm/revision/main"),
        format!("http://127.0.0.1:{port}/test/llama-spm/resolve/{commit}/config.json"),
        format!("http://localhost:{port}/lfs/test/llama-spm/model-00001-of-00002.safetensors"),
    ] {
        assert!(log.contains(&needle), "{needle} not proxied: {log:?}");
    }
    // Every request the server saw came through the proxy.
    assert_eq!(server.log().len(), log.len());
}

#[test]
fn no_proxy_hosts_are_reached_directly_and_a_bad_proxy_is_refused() {
    let (server, scratch, _, _) = serve_fixture("llama-spm");
    let proxy = HttpProxy::start();
    let client = proxied(
        &server,
        &[
            ("http_proxy", &proxy.url()),
            ("NO_PROXY", "localhost,127.0.0.1"),
        ],
    )
    .unwrap();
    let snap = snapshot(&scratch, client, "test/llama-spm").unwrap();
    convert(&snap.dir, &scratch.path().join("direct.gguf"), false).unwrap();
    assert!(proxy.log().is_empty(), "{:?}", proxy.log());
    let e = proxied(&server, &[("HTTPS_PROXY", "socks5://127.0.0.1:1")]).unwrap_err();
    assert!(
        matches!(&e, RemoteError::BadProxy { proxy, .. } if proxy == "socks5://127.0.0.1:1"),
        "{e}"
    );
}

#[test]
fn the_system_roots_are_added_to_the_bundled_ones() {
    let (roots, from_system) = ggufkit_converters::remote::tls::root_store();
    assert!(roots.len() >= from_system);
    assert!(
        roots.len() - from_system >= 100,
        "the bundled roots are missing: {} in all",
        roots.len()
    );
}
