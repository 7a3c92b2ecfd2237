// swift-tools-version:6.1
// Only for `make openapi`: builds swift-openapi-generator to regenerate the committed code of BrokerOpenAPI and
// Data4HelpClient from openapi.yaml. The product's package does not build the generator (scripts/openapi.sh).
import PackageDescription

let package = Package(
    name: "OpenAPIGeneratorTool",
    dependencies: [
        // The same version the generated files were written with; scripts/openapi.sh records it in the stamp.
        .package(url: "https://github.com/apple/swift-openapi-generator.git", exact: "1.14.3")
    ],
    targets: []
)
