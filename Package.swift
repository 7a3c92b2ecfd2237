// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Data4Help",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "d4h", targets: ["d4h"]),
        .executable(name: "d4h-dev", targets: ["d4h-dev"]),
        .library(name: "Data4HelpClient", targets: ["Data4HelpClient"]),
        .library(name: "AutomatedSOS", targets: ["AutomatedSOS"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", exact: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird.git", exact: "2.1.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", exact: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", exact: "1.4.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", exact: "1.33.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", exact: "2.37.6"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", exact: "1.8.2"),
        // CommandLineArguments: `d4h serve --http-port 9000` reads its flags through the same reader as the environment.
        .package(url: "https://github.com/apple/swift-configuration.git", exact: "1.4.0", traits: [.defaults, "CommandLineArguments"]),
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", exact: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-async-algorithms.git", exact: "1.1.4"),
        .package(url: "https://github.com/swift-server/async-http-client.git", exact: "1.37.0"),
        // The web console's server-rendered pages.
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", exact: "2.1.1"),
        // Tests only: the authorisation matrix reads the operations from openapi.yaml.
        .package(url: "https://github.com/jpsim/Yams", exact: "6.2.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CArgon2",
            pkgConfig: "libargon2",
            providers: [.apt(["libargon2-dev"])]
        ),
        // The enrolment page's QR code (SVG drawn by the server, sent to no outside service).
        .systemLibrary(
            name: "CQRencode",
            pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // Downloads compressed for clients that accept zstd (BrokerHTTP/ContentCoding).
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"])]
        ),
        // glibc's `mallopt`: `d4h` caps the heap arenas (Sources/d4h/MallocArenaLimit.swift).
        .systemLibrary(name: "CMalloc"),
        // The contract and the server code generated from it (types and handlers' protocol), at `package` access.
        // The generated code is committed (Generated/, `make openapi`; `make lint` checks it matches openapi.yaml):
        // the generator's build plugin made every build compile and run swift-openapi-generator.
        .target(
            name: "BrokerOpenAPI",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")
            ],
            exclude: ["openapi-generator-config.yaml", "Generated/openapi.sha256"],
            resources: [.copy("openapi.yaml")],
            // The generated files say `package import Foundation`; SwiftPM's resource accessor says `import Foundation`.
            // With internal imports by default the two no longer disagree about Foundation's access level.
            swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault")]
        ),
        // PostgresNIO's statements, guarded so that none waits for ever on a connection that closed under it
        // (StrandedStatements.swift says how PostgresNIO 1.33 strands them). BrokerDomain's own `query` and
        // `withTransaction` shadow PostgresNIO's and call these; a module of its own, because within the module
        // that shadows them PostgresNIO's methods can no longer be named.
        .target(
            name: "PostgresStatements",
            dependencies: [
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The domain: every capability (its service, store and types), the database, privacy, mail and the
        // background work. It speaks domain types only: no Hummingbird, no OpenAPIRuntime, no generated code
        // (docs/architecture.md). Nothing outside this package links it, so its API is `package`, not `public`.
        .target(
            name: "BrokerDomain",
            dependencies: [
                "CArgon2",
                "CQRencode",
                "CZlib",
                "PostgresStatements",
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // Webhook deliveries are outbound HTTP requests.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // MAIL_TRANSPORT=smtp speaks SMTP over NIO, with STARTTLS or implicit TLS.
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            resources: [.copy("Schema")]
        ),
        // The API: the generated handlers' implementation, problem documents, middleware, streamed bodies and
        // the HTTP side of rate-limited operations. Converts between the contract's types and the domain's.
        .target(
            name: "BrokerHTTP",
            dependencies: [
                "BrokerDomain",
                "CZstd",
                "PostgresStatements",
                "BrokerOpenAPI",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // The web console: server-rendered pages over the same domain services and rate-limited operations.
        .target(
            name: "BrokerConsole",
            dependencies: [
                "BrokerDomain",
                "BrokerHTTP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            resources: [.copy("Templates"), .copy("Assets"), .copy("Strings")]
        ),
        // The composition root: configuration, the services built once from it, the router and the
        // background work. The only target that sees every other server target.
        .target(
            name: "BrokerServer",
            dependencies: [
                "BrokerDomain",
                "BrokerHTTP",
                "BrokerConsole",
                "BrokerOpenAPI",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // What tests and benchmarks substitute for the real thing (seeded and absent noise, a mailer that
        // keeps its mail, the privacy benchmark's probe). The server and `d4h` never link it.
        .target(
            name: "BrokerTestSupport",
            dependencies: [
                "BrokerDomain",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // What operators and developers run, never the server: demo seeds, the synthetic population, the Apple
        // Health export generator. Used by `d4h seed`, `d4h-dev bench` and the tests.
        .target(
            name: "BrokerTooling",
            dependencies: [
                "BrokerDomain",
                // The seeds activate demo accounts with the token a capturing mailer keeps; synthetic data is
                // drawn from a seeded generator.
                "BrokerTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Runs on the person's device: Foundation only, never the network or server code.
        .target(name: "AutomatedSOS"),
        .target(
            name: "Data4HelpClient",
            dependencies: [
                "AutomatedSOS",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            ],
            // Its generated client is committed as BrokerOpenAPI's code is (`make openapi`).
            exclude: ["openapi.yaml", "openapi-generator-config.yaml", "Generated/openapi.sha256"]
        ),
        // What both executables' commands share: the database option, the logger, the exit on failure.
        .target(
            name: "CommandLineSupport",
            dependencies: [
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // The product's commands: serve, migrate, auditors, audit, import, sos.
        .executableTarget(
            name: "d4h",
            dependencies: [
                "BrokerDomain",
                "BrokerServer",
                "AutomatedSOS",
                "CMalloc",
                "CommandLineSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The developers' commands, never shipped: `d4h-dev bench …` (bench/run, bench/smoke) and
        // `d4h-dev privacy noise` (scripts/privacy-noise-check.sh).
        .executableTarget(
            name: "d4h-dev",
            dependencies: [
                "BrokerDomain",
                "BrokerServer",
                "BrokerTooling",
                "BrokerTestSupport",
                "AutomatedSOS",
                "CommandLineSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                // The webhook benchmark's receiver and client.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // The mail benchmark trusts its SMTP sink's self-signed certificate.
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .testTarget(
            name: "BrokerTests",
            dependencies: [
                "BrokerDomain",
                "BrokerHTTP",
                "BrokerConsole",
                "BrokerServer",
                "BrokerOpenAPI",
                "BrokerTooling",
                "BrokerTestSupport",
                "Data4HelpClient",
                "AutomatedSOS",
                // The compressed downloads' tests decompress what the server sent.
                "CZstd",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "Yams", package: "Yams"),
                // The TLS tests' client, with the test's own certificate as trust root and pinned TLS versions.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .testTarget(name: "AutomatedSOSTests", dependencies: ["AutomatedSOS"]),
        .testTarget(name: "Data4HelpClientTests", dependencies: ["Data4HelpClient", "AutomatedSOS"]),
    ],
    swiftLanguageModes: [.v6]
)
