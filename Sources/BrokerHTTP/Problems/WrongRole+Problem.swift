import BrokerDomain

extension WrongRole: ProblemConvertible {
    package var problem: Problem {
        Problem(status: .forbidden, slug: "wrong-role", title: "Not allowed for this role", detail: detail)
    }
}
