import Foundation
import HummingbirdTesting
import Testing

@Suite("Sessions")
struct SessionTests {
    @Test("a registered, activated person logs in and reads their profile")
    func logInAndReadProfile() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            let me = try await harness.request(.get, "/v1/me", token: token)
            #expect(me.status == .ok)
            let profile = try harness.object(me)
            #expect(profile["email"] as? String == person.email)
            #expect(profile["status"] as? String == "active")
            #expect(profile["fiscalCode"] as? String == person.fiscalCode)
            #expect(profile["passwordHash"] == nil)
        }
    }
}
