// Reads a Dockerfile into stages of instructions, continuation lines joined, so tests can compare its steps with
// scripts/image-build.sh and check what the image runs.

export interface Instruction {
  keyword: string;
  args: string;
}

export interface Stage {
  /** The `AS name` of the stage; '' for the final, unnamed one. */
  name: string;
  from: string;
  instructions: Instruction[];
}

export function parseDockerfile(text: string): Stage[] {
  const logical = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of logical) {
    const [keyword = '', ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    if (keyword.toUpperCase() === 'FROM') {
      const match = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      stages.push({ name: match?.[2] ?? '', from: match?.[1] ?? args, instructions: [] });
    } else {
      stages.at(-1)?.instructions.push({ keyword: keyword.toUpperCase(), args });
    }
  }
  return stages;
}

/** The shell commands of a stage's RUN instructions, one per `&&`-joined part, whitespace collapsed. */
export function runCommands(stage: Stage): string[] {
  return stage.instructions
    .filter((i) => i.keyword === 'RUN')
    .flatMap((i) => i.args.split('&&'))
    .map((command) => command.replace(/\s+/g, ' ').trim());
}
