import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.sls.synthetic.SynthJob;
import org.apache.hadoop.yarn.sls.synthetic.SynthTraceJobProducer;

/**
 * The jobs hadoop-sls's SynthTraceJobProducer draws from each SYNTH file
 * given, one JSON line per job, in the order SLS submits them. Each file
 * is read as a fresh SLS run reads it: SynthJob's job counter restarts at 0.
 * "hosts" are the node indexes AMDefinitionSynth draws for the tasks (a
 * java.util.Random seeded with the trace seed, one nextInt per task).
 */
public final class SynthJobsDump {
  public static void main(String[] args) throws Exception {
    ObjectMapper mapper = new ObjectMapper();
    Field sequence = SynthJob.class.getDeclaredField("sequence");
    sequence.setAccessible(true);
    for (String file : args) {
      ((AtomicInteger) sequence.get(null)).set(0);
      Configuration conf = new Configuration();
      conf.set("fs.defaultFS", "file:///");
      SynthTraceJobProducer stjp = new SynthTraceJobProducer(conf, new Path(file));
      SynthJob job;
      while ((job = (SynthJob) stjp.getNextJob()) != null) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("file", file);
        out.put("name", job.getName());
        out.put("job_id", job.getJobID().toString());
        out.put("type", job.getType());
        out.put("user", job.getUser());
        out.put("queue", job.getQueueName());
        out.put("submission_ms", job.getSubmissionTime());
        out.put("duration_ms", job.getDuration());
        out.put("deadline_ms", job.getDeadline());
        out.put("params", job.getParams());
        Random rand = new Random(stjp.getSeed());
        List<List<Object>> tasks = new ArrayList<>();
        for (SynthJob.SynthTask t : job.getTasks()) {
          List<Object> row = new ArrayList<>();
          row.add(t.getType());
          row.add(t.getPriority());
          row.add(t.getTime());
          row.add(t.getMemory());
          row.add(t.getVcores());
          row.add(t.getExecutionType().name());
          row.add(rand.nextInt(stjp.getNumNodes()));
          tasks.add(row);
        }
        out.put("tasks", tasks);
        System.out.println(mapper.writeValueAsString(out));
      }
    }
  }
}
