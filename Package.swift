// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Data4Help",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "d4h", targets: ["d4h"]),
        .library(name: "Data4HelpClient", targets: ["Data4HelpClient"]),
        .library(name: "AutomatedSOS", targets: ["AutomatedSOS"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird.git", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // CommandLineArguments: `d4h serve --http-port 9000` reads its flags through the same reader as the environment.
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: [.defaults, "CommandLineArguments"]),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-async-algorithms.git", from: "1.1.4"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // The web console's server-rendered pages.
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        // Tests only: the authorisation matrix reads the operations from openapi.yaml (already in the graph through the generator).
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CArgon2",
            pkgConfig: "libargon2",
            providers: [.apt(["libargon2-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // The contract and the server code generated from it (types and handlers' protocol), at `package` access.
        .target(
            name: "BrokerOpenAPI",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")
            ],
            resources: [.copy("openapi.yaml")],
            // The generated files say `package import Foundation`; SwiftPM's resource accessor says `import Foundation`.
            // With internal imports by default the two no longer disagree about Foundation's access level.
            swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault")],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // The server. Nothing outside this package links it, so its API is `package`, not `public`.
        .target(
            name: "Broker",
            dependencies: [
                "BrokerOpenAPI",
                "CArgon2",
                "CZlib",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            resources: [.copy("Schema"), .copy("Console/Templates"), .copy("Console/Assets")]
        ),
        // What operators and developers run, never the server: demo seeds, the synthetic population, the Apple
        // Health export generator. (The privacy benchmark's probe stays in Broker: it drives internal privacy
        // types that must not be widened to package access.) Used by `d4h seed`, `d4h bench` and the tests.
        .target(
            name: "BrokerTooling",
            dependencies: [
                "Broker",
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
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        .executableTarget(
            name: "d4h",
            dependencies: [
                "Broker",
                "BrokerTooling",
                "AutomatedSOS",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // The webhook benchmark's receiver and client.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "BrokerTests",
            dependencies: [
                "Broker",
                "BrokerOpenAPI",
                "BrokerTooling",
                "Data4HelpClient",
                "AutomatedSOS",
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
