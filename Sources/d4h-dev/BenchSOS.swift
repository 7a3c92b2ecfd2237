import ArgumentParser
import AutomatedSOS
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import Foundation

extension Bench {
    /// AutomatedSOS monitor throughput and alert latency; needs no server.
    struct SOSMonitorBench: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sos",
            abstract: "AutomatedSOS: monitor throughput (samples/s, one core) against a bare loop over the same samples, and sample-to-alert latency."
        )

        @Option(help: "Samples per throughput run.") var samples = 10_000_000
        @Option(help: "Alerts timed for the latency figures.") var alerts = 100_000

        func run() async throws {
            // A realistic mix on one clock: heart rate every second, steps every minute, oxygen saturation
            // every 10 s, a blood pressure pair every 5 minutes; all normal, so the monitor runs its full path
            // (insert, evaluate every rule of the type) without alerting.
            let start = Date(timeIntervalSince1970: 1_795_000_000)
            var trace: [SOSSample] = []
            trace.reserveCapacity(samples)
            var second = 0.0
            while trace.count < samples {
                let at = start.addingTimeInterval(second)
                trace.append(SOSSample(type: .heartRate, value: 60 + second.truncatingRemainder(dividingBy: 20), at: at))
                if Int(second) % 10 == 0 { trace.append(SOSSample(type: .oxygenSaturation, value: 97, at: at)) }
                if Int(second) % 60 == 0 { trace.append(SOSSample(type: .stepCount, value: 10, at: at)) }
                if Int(second) % 300 == 0 {
                    trace.append(SOSSample(type: .systolicPressure, value: 120, at: at))
                    trace.append(SOSSample(type: .diastolicPressure, value: 80, at: at))
                }
                second += 1
            }
            trace.removeLast(trace.count - samples)

            let clock = ContinuousClock()
            // Baseline: touch every sample once (the floor any monitor pays).
            var checksum = 0.0
            let baseline = clock.measure { for sample in trace { checksum += sample.value + sample.at.timeIntervalSinceReferenceDate } }

            var monitor = SOSMonitor(age: 45)
            var raised = 0
            let monitored = clock.measure {
                for sample in trace { monitor.ingest(sample) { _ in raised += 1 } }
            }

            print("| path | samples | seconds | samples/s | ratio to bare loop |")
            print("|---|---:|---:|---:|---:|")
            let baseSeconds = seconds(baseline)
            let monitorSeconds = seconds(monitored)
            print(
                "| SOSMonitor.ingest, default policy | \(samples) | \(String(format: "%.3f", monitorSeconds)) | \(Int(Double(samples) / monitorSeconds)) | \(String(format: "%.2f", baseSeconds / monitorSeconds)) |"
            )
            print(
                "| bare loop over the same samples (baseline) | \(samples) | \(String(format: "%.3f", baseSeconds)) | \(Int(Double(samples) / baseSeconds)) | 1.00 |"
            )
            print("alerts raised: \(raised) (expected 0); checksum \(Int(checksum) % 10)")

            // Latency: a critical reading, then the one that completes the condition, timed from the call
            // to the alert callback. Each round starts 20 minutes later, past the cooldown.
            var latencies: [Double] = []
            latencies.reserveCapacity(alerts)
            var latencyMonitor = SOSMonitor(age: 45)
            var base = 0.0
            for _ in 0..<alerts {
                latencyMonitor.ingest(SOSSample(type: .heartRate, value: 70, at: start.addingTimeInterval(base))) { _ in }
                latencyMonitor.ingest(SOSSample(type: .heartRate, value: 30, at: start.addingTimeInterval(base + 10))) { _ in }
                let completing = SOSSample(type: .heartRate, value: 30, at: start.addingTimeInterval(base + 20))
                let arrival = clock.now
                var alerted = arrival
                latencyMonitor.ingest(completing) { _ in alerted = clock.now }
                latencies.append(seconds(alerted - arrival) * 1e6)
                base += 1200
            }
            latencies.sort()
            func p(_ fraction: Double) -> String {
                String(format: "%.2f", latencies[min(latencies.count - 1, Int(Double(latencies.count - 1) * fraction))])
            }
            print("")
            print("| sample → alert latency | p50 µs | p99 µs | max µs |")
            print("|---|---:|---:|---:|")
            print("| SOSMonitor.ingest, \(alerts) alerts | \(p(0.5)) | \(p(0.99)) | \(p(1)) |")
        }

        func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }

    }
}
