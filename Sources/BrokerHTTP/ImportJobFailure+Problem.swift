import BrokerDomain

extension ImportJob.Failure {
    /// The problem document a failed background import records, as the request would have answered it.
    package init(_ problem: Problem) {
        self.init(type: Problem.typeBase + problem.slug, title: problem.title, status: Int(problem.status.code), detail: problem.detail)
    }
}
