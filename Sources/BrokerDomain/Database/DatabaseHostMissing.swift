/// None of `DATABASE_URL`'s hosts answered as its `target_session_attrs` asks (a command, unlike the server,
/// does not wait for a failover to finish).
struct DatabaseHostMissing: Error, CustomStringConvertible {
    let url: DatabaseURL
    var description: String {
        "no host of DATABASE_URL (\(url.hosts.map(\.description).joined(separator: ", "))) answers as target_session_attrs=\(url.targetSessionAttributes.rawValue) asks: is the database up, or a failover under way?"
    }
}
