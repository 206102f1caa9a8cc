package emu.fidelity.sls;

import java.io.IOException;
import java.io.PrintWriter;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.util.ToolRunner;
import org.apache.hadoop.yarn.sls.SLSRunner;
import org.apache.hadoop.yarn.sls.appmaster.AMSimulator;
import org.apache.hadoop.yarn.sls.scheduler.TaskRunner;

/**
 * SLSRunner.main as Hadoop 3.4.2 ships it, with two differences, and two
 * files written beside SLS's outputs.
 *
 * <p>The runner is built on a Configuration that loads Hadoop's defaults and
 * the configuration directory on the classpath (core-site.xml,
 * yarn-site.xml). The stock main builds its ResourceManager's configuration
 * in the no-argument constructor, from {@code new Configuration(false)} plus
 * sls-runner.xml, before ToolRunner hands it the loaded one; YarnConfiguration
 * copies the "no defaults" flag, so yarn-site.xml is never read and, unless
 * sls-runner.xml names yarn.resourcemanager.scheduler.class, RMRunner.startRM
 * fails on Class.forName(null). Hadoop's own tests avoid that constructor
 * (new SLSRunner(conf)); this does the same, so generic options (-D) reach
 * the runner's configuration too.
 *
 * <p>SLS's jobruntime.csv gives simulate_* times as epoch milliseconds (the
 * AMs are created before the task runner starts, with a baseline of 0), and
 * names jobs by application id. So: {@code sls-start-ms} holds the task
 * runner's start, the zero of SLS's simulated time, and {@code jobids.csv}
 * (written when the JVM exits) maps each trace job id to its application id.
 */
public final class SlsLauncher {
  private SlsLauncher() {
  }

  public static void main(String[] argv) throws Exception {
    // SLSRunner.main sets this so that the last finished application ends
    // the JVM (System.exit(0) in SLSRunner.exitSLSRunner).
    Field exit = SLSRunner.class.getDeclaredField("exitAtTheFinish");
    exit.setAccessible(true);
    exit.setBoolean(null, true);
    String output = null;
    for (int i = 0; i + 1 < argv.length; i++) {
      if (argv[i].equals("-output")) {
        output = argv[i + 1];
      }
    }
    Configuration conf = new Configuration();
    SLSRunner sls = new SLSRunner(conf);
    if (output != null) {
      Path out = Paths.get(output);
      Runtime.getRuntime().addShutdownHook(new Thread(() -> writeJobIds(sls, out)));
    }
    int code = ToolRunner.run(conf, sls, argv);
    if (output != null) {
      Field runner = SLSRunner.class.getDeclaredField("runner");
      runner.setAccessible(true);
      long start = ((TaskRunner) runner.get(null)).getStartTimeMS();
      Files.write(Paths.get(output, "sls-start-ms"),
          (start + "\n").getBytes(StandardCharsets.UTF_8));
    }
    if (code != 0) {
      System.exit(code);
    }
  }

  private static void writeJobIds(SLSRunner sls, Path out) {
    try {
      Field amRunner = SLSRunner.class.getDeclaredField("amRunner");
      amRunner.setAccessible(true);
      Object runner = amRunner.get(sls);
      @SuppressWarnings("unchecked")
      Map<String, AMSimulator> ams = (Map<String, AMSimulator>) runner.getClass()
          .getMethod("getAmMap").invoke(runner);
      Field appId = AMSimulator.class.getDeclaredField("appId");
      appId.setAccessible(true);
      try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(
          out.resolve("jobids.csv"), StandardCharsets.UTF_8))) {
        w.println("job_id,app_id");
        for (Map.Entry<String, AMSimulator> e : ams.entrySet()) {
          Object id = appId.get(e.getValue());
          w.println(e.getKey() + "," + (id == null ? "" : id));
        }
      }
    } catch (ReflectiveOperationException | IOException | RuntimeException e) {
      System.err.println("emu: could not write jobids.csv: " + e);
    }
  }
}
