//! Proxies as curl and huggingface_hub (requests) read them from the environment:
//! `http_proxy` / `HTTP_PROXY` for `http://` URLs, `https_proxy` / `HTTPS_PROXY` for
//! `https://` URLs, `all_proxy` / `ALL_PROXY` for either when those are unset (the lowercase
//! spelling first, as curl reads it), and `no_proxy` / `NO_PROXY`: hosts reached directly.
//! An `http://` URL goes through an HTTP proxy as an absolute-form request; an `https://`
//! one through a `CONNECT` tunnel.

use super::RemoteError;

/// The proxies of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Proxies {
    /// The proxy of `http://` URLs (`http://[user:pass@]host:port`).
    pub http: Option<String>,
    /// The proxy of `https://` URLs.
    pub https: Option<String>,
    /// Hosts reached directly (`no_proxy` entries: `*`, a host name matching itself and its
    /// sub-domains, with or without a leading dot, an IP address, each optionally `:port`).
    pub no_proxy: Vec<String>,
}

impl Proxies {
    /// The proxies the environment names.
    pub fn from_env() -> Proxies {
        Proxies::from_vars(&|k| std::env::var(k).ok())
    }

    /// The proxies the variables `var` gives (empty values count as unset).
    pub fn from_vars(var: &dyn Fn(&str) -> Option<String>) -> Proxies {
        let first = |names: &[&str]| {
            names.iter().find_map(|n| {
                var(n)
                    .map(|v| v.trim().to_string())
                    .filter(|v| !v.is_empty())
            })
        };
        let all = first(&["all_proxy", "ALL_PROXY"]);
        Proxies {
            http: first(&["http_proxy", "HTTP_PROXY"]).or_else(|| all.clone()),
            https: first(&["https_proxy", "HTTPS_PROXY"]).or(all),
            no_proxy: first(&["no_proxy", "NO_PROXY"])
                .map(|v| {
                    v.split([',', ' '])
                        .map(str::trim)
                        .filter(|e| !e.is_empty())
                        .map(str::to_ascii_lowercase)
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// The proxy `url` goes through, or `None` to connect directly.
    pub fn for_url(&self, url: &url::Url) -> Option<&str> {
        let proxy = match url.scheme() {
            "http" => self.http.as_deref(),
            "https" => self.https.as_deref(),
            _ => None,
        }?;
        let host = url
            .host_str()?
            .trim_matches(['[', ']'])
            .to_ascii_lowercase();
        let port = url.port_or_known_default();
        (!self.no_proxy.iter().any(|e| bypasses(e, &host, port))).then_some(proxy)
    }

    /// A ureq proxy of `proxy` (a URL the environment gave), or an error naming it.
    pub fn parse(proxy: &str) -> Result<ureq::Proxy, RemoteError> {
        let with_scheme = if proxy.contains("://") {
            proxy.to_string()
        } else {
            // curl's default scheme for a proxy without one.
            format!("http://{proxy}")
        };
        if !with_scheme.starts_with("http://") {
            return Err(RemoteError::BadProxy {
                proxy: proxy.to_string(),
                why: "only http:// proxies are supported".into(),
            });
        }
        ureq::Proxy::new(&with_scheme).map_err(|e| RemoteError::BadProxy {
            proxy: proxy.to_string(),
            why: e.to_string(),
        })
    }
}

/// Whether no_proxy entry `entry` covers `host` (lowercase, no brackets) on `port`.
fn bypasses(entry: &str, host: &str, port: Option<u16>) -> bool {
    if entry == "*" {
        return true;
    }
    // `host:port` (an IPv6 address has more than one colon and no port here).
    let (name, entry_port) = match entry.rsplit_once(':') {
        Some((n, p)) if !n.contains(':') => match p.parse::<u16>() {
            Ok(p) => (n, Some(p)),
            Err(_) => (entry, None),
        },
        _ => (entry, None),
    };
    if entry_port.is_some_and(|p| Some(p) != port) {
        return false;
    }
    let name = name.trim_start_matches('.').trim_matches(['[', ']']);
    !name.is_empty()
        && (host == name
            || host
                .strip_suffix(name)
                .is_some_and(|rest| rest.ends_with('.')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxies(pairs: &[(&str, &str)]) -> Proxies {
        Proxies::from_vars(&|k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        })
    }

    fn via<'a>(p: &'a Proxies, url: &str) -> Option<&'a str> {
        p.for_url(&url::Url::parse(url).unwrap())
    }

    #[test]
    fn each_scheme_has_its_proxy_and_no_proxy_bypasses_them() {
        let p = proxies(&[
            ("HTTP_PROXY", "http://up:1"),
            ("https_proxy", "http://lower:2"),
            ("HTTPS_PROXY", "http://upper:3"),
            (
                "NO_PROXY",
                "internal.example, .corp.example,10.1.2.3,cdn.example:8443",
            ),
        ]);
        assert_eq!(via(&p, "http://hub.example/x"), Some("http://up:1"));
        // The lowercase spelling first, as curl.
        assert_eq!(via(&p, "https://hub.example/x"), Some("http://lower:2"));
        for direct in [
            "https://internal.example/x",
            "https://a.internal.example/x",
            "https://corp.example/x",
            "https://b.corp.example/x",
            "http://10.1.2.3:8080/x",
            "https://cdn.example:8443/x",
        ] {
            assert_eq!(via(&p, direct), None, "{direct}");
        }
        for proxied in [
            "https://notinternal.example/x",
            "https://cdn.example/x",
            "http://10.1.2.30/x",
        ] {
            assert!(via(&p, proxied).is_some(), "{proxied}");
        }
        let all = proxies(&[("ALL_PROXY", "http://all:4"), ("no_proxy", "*")]);
        assert_eq!(via(&all, "https://hub.example/x"), None);
        let all = proxies(&[("all_proxy", "all:4")]);
        assert_eq!(via(&all, "http://hub.example/x"), Some("all:4"));
        assert_eq!(via(&proxies(&[]), "https://hub.example/x"), None);
        assert!(Proxies::parse("all:4").is_ok());
        assert!(Proxies::parse("socks5://s:1").is_err());
    }
}
