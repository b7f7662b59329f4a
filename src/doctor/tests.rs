use super::*;

fn checks(verdicts: &[(&str, Verdict)]) -> Vec<Check> {
    verdicts
        .iter()
        .map(|(name, verdict)| check(name, *verdict, "", None))
        .collect()
}

#[test]
fn the_verdict_says_where_gpu_images_run_and_why() {
    use Verdict::*;
    let no_driver = checks(&[
        ("docker", Pass),
        ("nvidia-driver", Warn),
        ("container-toolkit", Warn),
        ("spec", Pass),
    ]);
    assert_eq!(
        verdict(&no_driver, "cpu-jupyter"),
        "verdict: CPU images: ready; GPU images: will run on the CPU: no NVIDIA driver"
    );
    let mut cpu = no_driver.clone();
    for_cpu_spec(&mut cpu);
    let cpu_verdicts: Vec<Verdict> = cpu.iter().map(|check| check.verdict).collect();
    assert_eq!(cpu_verdicts, [Pass, Info, Info, Pass]);
    assert_eq!(
        verdict(&cpu, "cpu-jupyter"),
        verdict(&no_driver, "cpu-jupyter")
    );
    let no_toolkit = checks(&[
        ("docker", Pass),
        ("nvidia-driver", Pass),
        ("gpus", Pass),
        ("container-toolkit", Fail),
    ]);
    assert_eq!(
            verdict(&no_toolkit, "gpu-jupyter"),
            "verdict: CPU images: ready; GPU images: not ready (`container-toolkit` fails; its fix is below)"
        );
    let old_driver = checks(&[
        ("docker", Pass),
        ("nvidia-driver", Pass),
        ("gpus", Pass),
        ("container-toolkit", Pass),
        ("driver-vs-cuda", Fail),
    ]);
    assert_eq!(
            verdict(&old_driver, "gpu-jupyter"),
            "verdict: CPU images: ready; GPU images: ready; `gpu-jupyter`: not ready (`driver-vs-cuda` fails; its fix is below)"
        );
    let no_docker = checks(&[("docker", Fail), ("nvidia-driver", Warn)]);
    assert_eq!(
        verdict(&no_docker, "gpu-jupyter"),
        "verdict: nothing runs here yet: Docker does not answer (its fix is below)"
    );
}

#[test]
fn the_report_aligns_the_checks_and_puts_each_fix_under_its_summary() {
    let checks = vec![
        check("docker", Verdict::Pass, "29.1 answers", None),
        check(
            "gpus",
            Verdict::Fail,
            "none",
            Some("install a driver".into()),
        ),
    ];
    assert_eq!(
            report(&checks, "cpu-jupyter"),
            format!(
                "{}\nPASS  docker  29.1 answers\nFAIL  gpus    none\n              fix: install a driver\n",
                verdict(&checks, "cpu-jupyter")
            )
        );
    assert!(failed(&checks));
    assert!(!failed(&checks[..1]));
}
