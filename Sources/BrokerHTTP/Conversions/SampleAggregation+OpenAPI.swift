import BrokerDomain
import BrokerOpenAPI

extension Components.Schemas.SampleAggregation {
    /// Exhaustive: a new aggregation is a compile error here, not a silent mean.
    init(_ aggregation: SampleAggregation) {
        switch aggregation {
        case .dailyTotal: self = .dailyTotal
        case .mean: self = .mean
        }
    }
}
