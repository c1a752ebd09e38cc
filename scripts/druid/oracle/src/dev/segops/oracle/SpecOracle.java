package dev.segops.oracle;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.common.collect.ImmutableSet;
import com.google.inject.Injector;
import com.google.inject.Key;
import org.apache.druid.cli.CliOverlord;
import org.apache.druid.common.utils.IdUtils;
import org.apache.druid.discovery.NodeRole;
import org.apache.druid.guice.StartupInjectorBuilder;
import org.apache.druid.guice.annotations.Json;
import org.apache.druid.indexing.common.task.Task;
import org.apache.druid.sql.calcite.planner.PlannerFactory;
import org.apache.calcite.sql.parser.SqlParser;

import java.io.PrintStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Reads native task specs the way a Druid 33 Overlord reads {@code POST /druid/indexer/v1/task}: the {@code @Json}
 * ObjectMapper of the injector {@link CliOverlord} builds (its own modules plus every extension module on the
 * classpath, loaded through ServiceLoader as the Overlord loads them), then what {@code OverlordResource#taskPost}
 * and {@code TaskQueue#add} check before the task is queued. One JVM for all specs.
 *
 * <p>SQL ({@code .sql} files): the MSQ extension is not served for 33.0.0, so only the Broker's parse is modelled —
 * Druid's own Calcite parser with the configuration {@code PlannerFactory} plans with ({@code PARSER_CONFIG}: the
 * {@code DruidSqlParserImpl} grammar, whose INSERT/REPLACE … PARTITIONED BY / CLUSTERED BY rules run while parsing).
 * A parse verdict says nothing about the validator's rules, which need the planner and the MSQ engine.
 *
 * <p>Usage: {@code SpecOracle <dir|file>...}; prints one JSON line per {@code .json} or {@code .sql} file,
 * {@code {"file", "verdict": "accept"|"reject", "message", "level": "task"|"parse"}}, in path order.
 */
public final class SpecOracle
{
  private SpecOracle()
  {
  }

  public static void main(String[] args) throws Exception
  {
    // Druid's logging goes to stderr (log4j2 config of the run script); stdout carries the verdicts only.
    final PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    final ObjectMapper mapper = overlordMapper();
    final ObjectMapper plain = new ObjectMapper();
    final SqlParser.Config sqlConfig = brokerParserConfig();
    for (Path file : specFiles(args)) {
      final ObjectNode line = plain.createObjectNode();
      line.put("file", file.toString());
      final boolean sql = file.toString().endsWith(".sql");
      final String problem = sql
                             ? parse(sqlConfig, new String(Files.readAllBytes(file), StandardCharsets.UTF_8))
                             : check(mapper, Files.readAllBytes(file));
      line.put("verdict", problem == null ? "accept" : "reject");
      line.put("message", problem == null ? "" : problem);
      line.put("level", sql ? "parse" : "task");
      out.println(plain.writeValueAsString(line));
    }
  }

  /** The Overlord's JSON mapper: the injector {@code CliOverlord#run} makes, without starting its lifecycle. */
  static ObjectMapper overlordMapper()
  {
    final Injector base = new StartupInjectorBuilder().forServer().build();
    final CliOverlord overlord = new CliOverlord();
    base.injectMembers(overlord);
    final Injector injector = overlord.makeInjector(ImmutableSet.of(NodeRole.OVERLORD));
    return injector.getInstance(Key.get(ObjectMapper.class, Json.class));
  }

  /**
   * Why the Overlord refuses the spec, or null when it queues it: Jackson's deserialisation of {@link Task}
   * (constructors' checks included), {@code OverlordResource#getNeededResourceActionsForTask} (the destination
   * resource) and {@code TaskQueue#add} ({@code IdUtils.validateId("Task ID", …)}, the payload serialised).
   */
  static String check(ObjectMapper mapper, byte[] json)
  {
    try {
      final Task task = mapper.readValue(json, Task.class);
      if (task == null) {
        return "no task (a JSON null)";
      }
      task.getDestinationResource();
      IdUtils.validateId("Task ID", task.getId());
      mapper.writeValueAsString(task);
      return null;
    }
    catch (Throwable t) {
      return describe(t);
    }
  }

  /** {@code PlannerFactory.PARSER_CONFIG}: the parser configuration Druid's SQL planner uses (package-private). */
  static SqlParser.Config brokerParserConfig() throws Exception
  {
    final Field field = PlannerFactory.class.getDeclaredField("PARSER_CONFIG");
    field.setAccessible(true);
    return (SqlParser.Config) field.get(null);
  }

  /** Why Druid's parser refuses one statement, or null when it parses. */
  static String parse(SqlParser.Config config, String sql)
  {
    try {
      SqlParser.create(sql, config).parseStmt();
      return null;
    }
    catch (Throwable t) {
      return describe(t);
    }
  }

  /** The innermost message that says something, as Druid's error mappers pass it on. */
  static String describe(Throwable t)
  {
    String message = null;
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c.getMessage() != null) {
        message = c.getClass().getSimpleName() + ": " + c.getMessage();
      }
      if (c.getCause() == c) {
        break;
      }
    }
    if (message == null) {
      message = t.getClass().getName();
    }
    // Jackson quotes the whole document ("at [Source: …; line: l, column: c]"): the reference chain after it
    // says where, so the excerpt goes; line breaks become spaces so one verdict stays one line.
    return message.replaceAll("(?s) at \\[Source: .*?; line: \\d+, column: \\d+\\]", "")
                  .replaceAll("[\\r\\n]+", " ")
                  .trim();
  }

  static List<Path> specFiles(String[] args) throws Exception
  {
    final List<Path> files = new ArrayList<>();
    for (String arg : args) {
      final Path p = Paths.get(arg);
      if (Files.isDirectory(p)) {
        try (Stream<Path> s = Files.walk(p)) {
          files.addAll(
              s.filter(f -> f.toString().endsWith(".json") || f.toString().endsWith(".sql"))
               .sorted()
               .collect(Collectors.toList())
          );
        }
      } else {
        files.add(p);
      }
    }
    return files;
  }
}
