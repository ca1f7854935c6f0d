//! PostgreSQL over TLS: a real server with a certificate signed by a throwaway CA (made with the
//! openssl command line) that refuses unencrypted TCP connections; the store connects under each
//! `sslmode`, and the server's own view (`pg_stat_ssl`) shows the session encrypted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use caption_jobs::{JobSpec, JobStore, PostgresJobStore};
use caption_testkit::PostgresServer;

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the openssl command (Debian package openssl)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA (`ca.pem`) and a server certificate it signed for 127.0.0.1 only (`server.pem`,
/// `server.key`), in `dir`.
fn make_certificates(dir: &Path) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509", "-days", "2", "-subj", "/CN=caption test CA"];
    ca.extend(ec);
    ca.extend([
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    openssl(dir, &ca);
    let mut csr = vec!["req", "-subj", "/CN=127.0.0.1"];
    csr.extend(ec);
    csr.extend(["-keyout", "server.key", "-out", "server.csr"]);
    openssl(dir, &csr);
    std::fs::write(
        dir.join("server.ext"),
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n\
         extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-days",
            "2",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-extfile",
            "server.ext",
            "-out",
            "server.pem",
        ],
    );
}

/// The `ssl` flag of every session of database `jobs` named `application`, read over the
/// server's unix socket (trusted without TLS by pg_hba.conf).
async fn ssl_of_sessions(server: &PostgresServer, application: &str) -> Vec<(bool, String)> {
    let socket = server.dir().join("data");
    let mut config = tokio_postgres::Config::new();
    config
        .host_path(&socket)
        .port(server.port())
        .user("captions")
        .dbname("postgres");
    let (client, connection) = config.connect(tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    client
        .query(
            "SELECT s.ssl, coalesce(s.version, '') FROM pg_stat_ssl s
             JOIN pg_stat_activity a USING (pid)
             WHERE a.datname = 'jobs' AND a.application_name = $1",
            &[&application],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect()
}

#[tokio::test]
async fn the_job_store_speaks_tls_as_sslmode_says() {
    let certs = tempfile::tempdir().unwrap();
    make_certificates(certs.path());
    let server = PostgresServer::start_tls(
        &certs.path().join("server.pem"),
        &certs.path().join("server.key"),
    )
    .unwrap();
    let url = server.database("jobs").unwrap();
    let ca = certs.path().join("ca.pem");
    let ca = ca.to_str().unwrap();

    // Encrypted, the certificate unchecked; the server sees a TLS session.
    for (mode, application) in [
        ("require", "tls-require"),
        ("prefer", "tls-prefer"),
        (&format!("verify-full&sslrootcert={ca}"), "tls-verify-full"),
        (&format!("verify-ca&sslrootcert={ca}"), "tls-verify-ca"),
    ] {
        let jobs = PostgresJobStore::connect(&format!(
            "{url}?sslmode={mode}&application_name={application}"
        ))
        .await
        .unwrap_or_else(|e| panic!("sslmode={mode}: {e}"));
        let job = jobs
            .submit(JobSpec::transcribe("uploads/1/talk.mp4", "en"))
            .await
            .unwrap();
        assert_eq!(
            jobs.get(&job.id).await.unwrap().unwrap().spec.input,
            "uploads/1/talk.mp4"
        );
        let sessions = ssl_of_sessions(&server, application).await;
        assert!(!sessions.is_empty(), "no session of {application}");
        for (ssl, version) in sessions {
            assert!(ssl, "sslmode={mode}: the session is not encrypted");
            assert!(version.starts_with("TLSv1."), "sslmode={mode}: {version}");
        }
    }

    // The URL without a mode prefers TLS, which this server insists on.
    PostgresJobStore::connect(&url).await.unwrap();

    // verify-full with the system's roots alone: the throwaway CA is unknown.
    let error = PostgresJobStore::connect(&format!("{url}?sslmode=verify-full"))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("TLS"), "{error}");
    assert!(error.contains("UnknownIssuer"), "{error}");
    assert!(!error.contains(ca), "{error}");

    // The certificate names 127.0.0.1, not localhost: verify-full refuses the name, verify-ca
    // (which checks the chain only) accepts it.
    let by_name = url.replace("127.0.0.1", "localhost");
    let error =
        PostgresJobStore::connect(&format!("{by_name}?sslmode=verify-full&sslrootcert={ca}"))
            .await
            .unwrap_err()
            .to_string();
    assert!(
        error.contains("not valid for name \"localhost\""),
        "{error}"
    );
    PostgresJobStore::connect(&format!("{by_name}?sslmode=verify-ca&sslrootcert={ca}"))
        .await
        .unwrap();

    // Without TLS the server refuses the connection (pg_hba.conf has hostssl lines only).
    let error = PostgresJobStore::connect(&format!("{url}?sslmode=disable"))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("no encryption"), "{error}");

    // A certificate file that does not exist is named.
    let error =
        PostgresJobStore::connect(&format!("{url}?sslmode=verify-full&sslrootcert=/no/ca.pem"))
            .await
            .unwrap_err()
            .to_string();
    assert!(error.contains("sslrootcert /no/ca.pem"), "{error}");
}
