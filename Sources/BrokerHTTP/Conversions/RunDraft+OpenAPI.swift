import BrokerDomain
import BrokerOpenAPI
import Foundation

// A run's body in domain terms. The time's syntax is named here; the service names what breaks its rules.

extension RunService.Draft {
    init(_ body: Components.Schemas.RunCreation) {
        self.init(
            name: body.name, startsAt: Self.time(body.startsAt), durationMinutes: body.durationMinutes,
            maxParticipants: body.maxParticipants, path: .init(body.path))
    }

    init(_ body: Components.Schemas.RunEdit) {
        self.init(
            name: body.name, startsAt: body.startsAt.map(Self.time), durationMinutes: body.durationMinutes,
            maxParticipants: body.maxParticipants, path: body.path.map(Path.init))
    }

    /// Shared with the console, whose form takes the same text.
    package static func time(_ text: String) -> Parsed<Date> {
        guard let time = Timestamp.parse(text) else { return .unreadable("must be an RFC 3339 time such as 2026-03-01T08:00:00Z") }
        return .value(time)
    }
}

extension RunService.Draft.Path {
    init(_ path: Components.Schemas.RunPathInput) {
        self.init(format: .value(RunPath.Format(path.format)), text: path.data)
    }
}
