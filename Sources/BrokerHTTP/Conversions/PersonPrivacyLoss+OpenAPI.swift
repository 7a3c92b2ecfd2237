import BrokerDomain
import BrokerOpenAPI
import Foundation

extension Components.Schemas.PersonPrivacyLoss {
    init(_ loss: PersonPrivacyLoss) {
        self.init(
            summary: loss.summary, cap: loss.capRho, groupCap: loss.groupCapRho, spent: loss.spentRho, spentShare: loss.spentShare,
            groupSpent: loss.groupSpentRho, groupSpentShare: loss.groupSpentShare, epsilon: loss.epsilon, delta: loss.delta,
            countsFrom: loss.countsFrom.description, oldestMonthEndsAt: loss.oldestMonthEndsAt,
            months: loss.months.map {
                .init(month: String($0.start.description.prefix(7)), rho: $0.rho, share: loss.share(of: $0.rho))
            },
            requests: loss.requests.map {
                .init(
                    requestId: $0.requestID.uuidString.lowercased(), companyName: $0.companyName, contribution: .init($0.contribution),
                    rho: $0.rho, share: loss.share(of: $0.rho))
            },
            unattributedRho: loss.unattributedRho,
            peerReserve: .init(
                rho: loss.peerReserveRho, share: loss.peerReserveShare, spentAtMost: loss.peerSpentAtMostRho,
                spentAtMostShare: loss.peerSpentAtMostShare))
    }
}

extension Components.Schemas.PersonPrivacyRequest.ContributionPayload {
    init(_ contribution: PersonPrivacyLoss.Contribution) {
        switch contribution {
        case .results: self = .results
        case .cohortSize: self = .cohortSize
        }
    }
}
