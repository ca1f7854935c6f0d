//! TLS for PostgreSQL connections, through rustls: libpq's `sslmode` and `sslrootcert`
//! connection parameters, which tokio-postgres parses only in part (it knows neither
//! `verify-ca` nor `verify-full` nor root certificates).

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect};

use crate::{Error, Result};

/// libpq's `sslmode`, whose default is `prefer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SslMode {
    /// Plain TCP only.
    Disable,
    /// TLS when the server offers it, plain otherwise; the certificate is not checked.
    Prefer,
    /// TLS or no connection; the certificate is not checked (libpq's meaning).
    Require,
    /// TLS with a certificate chained to a trusted root, whatever its host name.
    VerifyCa,
    /// TLS with a certificate chained to a trusted root and naming the host connected to.
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "disable" => Self::Disable,
            "prefer" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            _ => return None,
        })
    }
}

/// A connection string split into what tokio-postgres reads and the TLS settings it does not.
#[derive(Debug)]
pub(crate) struct ConnectOptions {
    /// The connection string without `sslmode` and `sslrootcert`.
    pub(crate) config: tokio_postgres::Config,
    pub(crate) ssl_mode: SslMode,
    pub(crate) root_cert: Option<PathBuf>,
}

/// Reads `url`: a URL (`postgres://user@host/db?sslmode=verify-full&sslrootcert=/ca.pem`) or
/// libpq's `key=value` form. `shown` names the database in errors (the URL without password).
pub(crate) fn parse(url: &str, shown: &str) -> Result<ConnectOptions> {
    let config_error = |message: String| Error::Database {
        path: shown.to_owned(),
        message,
    };
    let mut ssl_mode = SslMode::Prefer;
    let mut root_cert = None;
    let mut take = |key: &str, value: String| -> Result<bool> {
        match key {
            "sslmode" => {
                ssl_mode = SslMode::parse(&value).ok_or_else(|| {
                    config_error(format!(
                        "sslmode {value:?} is not one of disable, prefer, require, verify-ca, verify-full"
                    ))
                })?;
                Ok(true)
            }
            "sslrootcert" => {
                root_cert = Some(PathBuf::from(value));
                Ok(true)
            }
            _ => Ok(false),
        }
    };
    let rest = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        match url.split_once('?') {
            Some((base, query)) => {
                let mut kept = Vec::new();
                for pair in query.split('&').filter(|p| !p.is_empty()) {
                    let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                    if !take(key, percent_decode(value))? {
                        kept.push(pair);
                    }
                }
                if kept.is_empty() {
                    base.to_owned()
                } else {
                    format!("{base}?{}", kept.join("&"))
                }
            }
            None => url.to_owned(),
        }
    } else {
        // Values of these two keys hold no spaces in practice; quoting is left to libpq's form
        // of the other keys, which tokio-postgres reads.
        let mut kept = Vec::new();
        for token in url.split_whitespace() {
            let (key, value) = token.split_once('=').unwrap_or((token, ""));
            if !take(key.trim(), value.trim_matches('\'').to_owned())? {
                kept.push(token);
            }
        }
        kept.join(" ")
    };
    let mut config: tokio_postgres::Config = rest
        .parse()
        .map_err(|e: tokio_postgres::Error| config_error(with_causes(&e)))?;
    config.ssl_mode(match ssl_mode {
        SslMode::Disable => tokio_postgres::config::SslMode::Disable,
        SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
            tokio_postgres::config::SslMode::Require
        }
    });
    Ok(ConnectOptions {
        config,
        ssl_mode,
        root_cert,
    })
}

/// `error` and its causes: tokio-postgres' own message names only the stage that failed ("error
/// performing TLS handshake"), its cause says why ("invalid peer certificate: UnknownIssuer").
pub(crate) fn with_causes(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

fn percent_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The rustls connector for `options`: the system's root certificates plus `sslrootcert`'s.
pub(crate) fn connector(options: &ConnectOptions, shown: &str) -> Result<MakeRustls> {
    let config_error = |message: String| Error::Database {
        path: shown.to_owned(),
        message,
    };
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| config_error(format!("TLS: {e}")))?;
    let chain = match options.ssl_mode {
        SslMode::Disable | SslMode::Prefer | SslMode::Require => None,
        SslMode::VerifyCa | SslMode::VerifyFull => {
            let roots = Arc::new(root_store(options.root_cert.as_deref(), &config_error)?);
            let chain = WebPkiServerVerifier::builder_with_provider(roots, Arc::clone(&provider))
                .build()
                .map_err(|e| config_error(format!("TLS root certificates: {e}")))?;
            Some(chain)
        }
    };
    let verifier = Verifier {
        provider,
        chain,
        check_name: options.ssl_mode == SslMode::VerifyFull,
    };
    let config = builder
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(MakeRustls(tokio_rustls::TlsConnector::from(Arc::new(
        config,
    ))))
}

fn root_store(
    root_cert: Option<&Path>,
    config_error: &dyn Fn(String) -> Error,
) -> Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    // Unreadable system certificates are skipped, as libpq does with a missing default file.
    let system = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(system.certs);
    if let Some(path) = root_cert {
        let certs = CertificateDer::pem_file_iter(path)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| config_error(format!("sslrootcert {}: {e}", path.display())))?;
        if certs.is_empty() {
            return Err(config_error(format!(
                "sslrootcert {}: no PEM certificate in the file",
                path.display()
            )));
        }
        for cert in certs {
            roots
                .add(cert)
                .map_err(|e| config_error(format!("sslrootcert {}: {e}", path.display())))?;
        }
    }
    if roots.is_empty() {
        return Err(config_error(
            "no root certificate to verify the server with: the system has none and the URL names no sslrootcert".into(),
        ));
    }
    Ok(roots)
}

/// What is checked of the server's certificate. The handshake's signatures are checked in
/// every mode, so the session keys belong to the certificate presented.
#[derive(Debug)]
struct Verifier {
    provider: Arc<CryptoProvider>,
    /// The chain's check: none for `require` and `prefer` (encrypted, certificate unchecked, as
    /// libpq does).
    chain: Option<Arc<WebPkiServerVerifier>>,
    /// Whether the certificate must name the host: `verify-full`, not `verify-ca`.
    check_name: bool,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// tokio-postgres' TLS hook over a rustls client configuration.
#[derive(Clone)]
pub(crate) struct MakeRustls(tokio_rustls::TlsConnector);

impl<S> MakeTlsConnect<S> for MakeRustls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type TlsConnect = RustlsConnect;
    type Error = rustls::pki_types::InvalidDnsNameError;

    fn make_tls_connect(&mut self, domain: &str) -> Result<RustlsConnect, Self::Error> {
        Ok(RustlsConnect {
            connector: self.0.clone(),
            server_name: ServerName::try_from(domain.to_owned())?,
        })
    }
}

/// One handshake, with the host name connected to.
pub(crate) struct RustlsConnect {
    connector: tokio_rustls::TlsConnector,
    server_name: ServerName<'static>,
}

impl<S> TlsConnect<S> for RustlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<RustlsStream<S>>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        Box::pin(async move {
            let stream = self.connector.connect(self.server_name, stream).await?;
            Ok(RustlsStream(stream))
        })
    }
}

/// An encrypted connection to the server.
pub(crate) struct RustlsStream<S>(tokio_rustls::client::TlsStream<S>);

impl<S: AsyncRead + AsyncWrite + Unpin> tokio_postgres::tls::TlsStream for RustlsStream<S> {
    fn channel_binding(&self) -> ChannelBinding {
        // SCRAM's channel binding (tls-server-end-point) is optional under tokio-postgres'
        // default `channel_binding=prefer`; none is offered.
        ChannelBinding::none()
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for RustlsStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for RustlsStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn tls_parameters_are_taken_out_of_the_url() {
        let options = parse(
            "postgres://u@db.example:5433/jobs?sslmode=verify-full&sslrootcert=%2Fetc%2Fca%20x.pem&application_name=captions",
            "shown",
        )
        .unwrap();
        assert_eq!(options.ssl_mode, SslMode::VerifyFull);
        assert_eq!(
            options.root_cert.as_deref(),
            Some(Path::new("/etc/ca x.pem"))
        );
        assert_eq!(options.config.get_application_name(), Some("captions"));
        assert_eq!(options.config.get_dbname(), Some("jobs"));

        let options = parse("host=db user=u sslmode=verify-ca sslrootcert=/ca.pem", "s").unwrap();
        assert_eq!(options.ssl_mode, SslMode::VerifyCa);
        assert_eq!(options.root_cert.as_deref(), Some(Path::new("/ca.pem")));
        assert_eq!(options.config.get_user(), Some("u"));

        assert_eq!(
            parse("postgres://u@h/db", "s").unwrap().ssl_mode,
            SslMode::Prefer
        );
    }

    #[test]
    fn an_unknown_sslmode_is_refused_by_name() {
        let error = parse("postgres://u@h/db?sslmode=verify", "postgres://u@h/db").unwrap_err();
        let message = error.to_string();
        assert!(message.contains("sslmode \"verify\""), "{message}");
        assert!(message.contains("verify-full"), "{message}");
    }

    #[test]
    fn a_missing_root_certificate_file_is_named() {
        let options = parse(
            "postgres://u@h/db?sslmode=verify-full&sslrootcert=/no/such/ca.pem",
            "s",
        )
        .unwrap();
        let error = connector(&options, "s").err().unwrap().to_string();
        assert!(error.contains("sslrootcert /no/such/ca.pem"), "{error}");
    }
}
