import BrokerDomain
import BrokerOpenAPI

// Buckets both ways, exhaustively: a new bucket on either side is a compile error, not a silent day.

extension Components.Schemas.StatisticsBucket {
    init(_ bucket: Statistics.Bucket) {
        switch bucket {
        case .day: self = .day
        case .week: self = .week
        case .month: self = .month
        }
    }
}

extension Statistics.Bucket {
    init(_ bucket: Components.Schemas.StatisticsBucket) {
        switch bucket {
        case .day: self = .day
        case .week: self = .week
        case .month: self = .month
        }
    }
}
